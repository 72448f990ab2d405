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

# The PyTorch backend (python/torch): CHORUS_BUILD_TORCH = AUTO (default: built with the
# Python module when Torch's CMake package and libtorch_python are found; Debian:
# python3-torch libtorch-dev), ON (required) or OFF.
set(CHORUS_BUILD_TORCH AUTO CACHE STRING
    "Build the PyTorch backend chorus.torch: AUTO (when Torch is found), ON or OFF")
set_property(CACHE CHORUS_BUILD_TORCH PROPERTY STRINGS AUTO ON OFF)
if(CHORUS_BUILD_TORCH AND TARGET chorus_python)
  find_package(Torch QUIET)
  if(Torch_FOUND OR TORCH_FOUND)
    find_library(CHORUS_TORCH_PYTHON_LIBRARY torch_python)
  endif()
  if((Torch_FOUND OR TORCH_FOUND) AND CHORUS_TORCH_PYTHON_LIBRARY)
    message(STATUS "PyTorch backend: building against Torch ${Torch_VERSION}")
    add_subdirectory(python/torch)
  elseif(CHORUS_BUILD_TORCH STREQUAL "ON")
    message(FATAL_ERROR "CHORUS_BUILD_TORCH=ON but Torch or libtorch_python was not found "
                        "(Debian: apt-get install python3-torch libtorch-dev)")
  else()
    message(STATUS "PyTorch backend: skipped (Torch not found; Debian: apt-get install "
                   "python3-torch libtorch-dev)")
  endif()
elseif(CHORUS_BUILD_TORCH STREQUAL "ON")
  message(FATAL_ERROR "CHORUS_BUILD_TORCH=ON needs the Python module (CHORUS_BUILD_PYTHON)")
else()
  message(STATUS "PyTorch backend: skipped (CHORUS_BUILD_TORCH=OFF or no Python module)")
endif()
