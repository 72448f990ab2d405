# The Python module (python/): CHORUS_BUILD_PYTHON = AUTO (default: built when Python 3's
# Development.Module and pybind11 are found), ON (required) or OFF. The interpreter is
# /usr/bin/python3 when it exists (Debian's, where python3-numpy lives); override with
# -DPython3_EXECUTABLE=...
set(CHORUS_BUILD_PYTHON AUTO CACHE STRING
    "Build the Python module: AUTO (when Python 3 headers and pybind11 are found), ON or OFF")
set_property(CACHE CHORUS_BUILD_PYTHON PROPERTY STRINGS AUTO ON OFF)
if(CHORUS_BUILD_PYTHON)  # AUTO and ON are true
  if(NOT DEFINED Python3_EXECUTABLE AND EXISTS /usr/bin/python3)
    set(Python3_EXECUTABLE /usr/bin/python3 CACHE FILEPATH "Interpreter of the Python module")
  endif()
  find_package(Python3 COMPONENTS Interpreter Development.Module QUIET)
  if(Python3_FOUND)
    find_package(pybind11 CONFIG QUIET)
  endif()
  if(Python3_FOUND AND pybind11_FOUND)
    message(STATUS "Python module: building for ${Python3_EXECUTABLE} (${Python3_VERSION}), pybind11 ${pybind11_VERSION}")
    add_subdirectory(python)
  elseif(CHORUS_BUILD_PYTHON STREQUAL "ON")
    message(FATAL_ERROR "CHORUS_BUILD_PYTHON=ON but Python 3 development headers or pybind11 "
                        "were not found (Debian: apt-get install python3-dev pybind11-dev)")
  else()
    message(STATUS "Python module: skipped (Python 3 development headers or pybind11 not "
                   "found; Debian: apt-get install python3-dev pybind11-dev)")
  endif()
else()
  message(STATUS "Python module: skipped (CHORUS_BUILD_PYTHON=OFF)")
endif()
