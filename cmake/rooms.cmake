# chorus_room(<name> DIR <dir> [DEPS <libs>...] [EXCLUDE <file names>...] [SERIAL <filter>])
#   One room = one static library built from <dir>/*.cc (not *_test.cc, nor the EXCLUDE
#   files, which the caller builds its own way), linking its DEPS privately: a call into a
#   room above it fails to link (tests/layering checks every include). The room's
#   *_test.cc files form one GoogleTest binary, chorus_<name>_test, whose cases CTest sees
#   one by one (label "unit"), except the cases SERIAL names (a GoogleTest filter, e.g.
#   "Suite.*"): label "serial", run alone in make test's second pass, for cases whose
#   subject is timing between processes that a concurrent test would disturb.
function(chorus_room name)
  cmake_parse_arguments(R "" "DIR;SERIAL" "DEPS;TEST_DEPS;EXCLUDE" ${ARGN})
  file(GLOB srcs CONFIGURE_DEPENDS ${R_DIR}/*.cc)
  file(GLOB tests CONFIGURE_DEPENDS ${R_DIR}/*_test.cc)
  if(tests)
    list(REMOVE_ITEM srcs ${tests})
  endif()
  foreach(skip ${R_EXCLUDE})
    list(FILTER srcs EXCLUDE REGEX "/${skip}$")
  endforeach()
  add_library(chorus_${name} STATIC ${srcs})
  target_include_directories(chorus_${name} PUBLIC ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/include)
  # PRIVATE: a room's usage requirements do not leak to the rooms above it. CMake still
  # links a static library's deps into whatever links it ($<LINK_ONLY:...>), so a skip-level
  # include (api -> transport) still links; tests/layering is what refuses it.
  target_link_libraries(chorus_${name} PRIVATE ${R_DEPS} Threads::Threads)
  if(CHORUS_BUILD_TESTS AND tests)
    add_executable(chorus_${name}_test ${tests})
    target_link_libraries(chorus_${name}_test PRIVATE chorus_${name} ${R_TEST_DEPS} GTest::gtest GTest::gmock GTest::gtest_main)
    target_compile_definitions(chorus_${name}_test PRIVATE CHORUS_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
    if(R_SERIAL)
      gtest_discover_tests(chorus_${name}_test TEST_FILTER "-${R_SERIAL}"
                           PROPERTIES TIMEOUT 120 LABELS unit DISCOVERY_TIMEOUT 60)
      gtest_discover_tests(chorus_${name}_test TEST_FILTER "${R_SERIAL}" TEST_SUFFIX .serial
                           PROPERTIES TIMEOUT 120 LABELS serial DISCOVERY_TIMEOUT 60)
    else()
      gtest_discover_tests(chorus_${name}_test PROPERTIES TIMEOUT 120 LABELS unit DISCOVERY_TIMEOUT 60)
    endif()
  endif()
endfunction()

# chorus_multiproc_test(<name> <sources>... [LABEL l] [TIMEOUT s])
#   A GoogleTest binary over the public API that forks real rank processes.
function(chorus_public_test name)
  cmake_parse_arguments(T "" "LABEL;TIMEOUT" "SOURCES;LIBS" ${ARGN})
  if(NOT T_LABEL)
    set(T_LABEL multiproc)
  endif()
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE chorus chorus_test_harness ${T_LIBS} GTest::gtest GTest::gtest_main)
  gtest_discover_tests(${name} PROPERTIES TIMEOUT ${T_TIMEOUT} LABELS ${T_LABEL} DISCOVERY_TIMEOUT 60)
endfunction()
