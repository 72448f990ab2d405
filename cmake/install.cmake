# cmake --install: headers, libchorus, tools, a CMake package (chorus::chorus) and chorus.pc.
include(CMakePackageConfigHelpers)
install(DIRECTORY include/chorus DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS chorus EXPORT chorusTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT chorusTargets NAMESPACE chorus:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/chorus)
configure_package_config_file(cmake/chorusConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/chorusConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/chorus)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/chorusConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/chorusConfig.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/chorusConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/chorus)
# chorus.pc finds its prefix relative to itself, so an installed tree can be moved.
file(RELATIVE_PATH CHORUS_PC_TO_PREFIX /root/${CMAKE_INSTALL_LIBDIR}/pkgconfig /root)
configure_file(cmake/chorus.pc.in ${CMAKE_CURRENT_BINARY_DIR}/chorus.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/chorus.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
