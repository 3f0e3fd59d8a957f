# Installs the library, the public headers and a CMake package so that an
# outside project can find_package(kvexec CONFIG REQUIRED).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS kvexec EXPORT kvexecTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY include/kvexec DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT kvexecTargets NAMESPACE kvexec::
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/kvexec)

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/kvexecConfig.cmake.in
    ${PROJECT_BINARY_DIR}/kvexecConfig.cmake
    INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/kvexec)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/kvexecConfigVersion.cmake
    COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/kvexecConfig.cmake
              ${PROJECT_BINARY_DIR}/kvexecConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/kvexec)
