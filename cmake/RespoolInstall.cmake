# What `cmake --install` puts in place: the respool command, the static
# libraries of the runtime and its core with their public headers, a
# pkg-config file and a CMake package (respool::respool), the man page and
# a systemd unit. The headers: respool.h (the core), respool_net.h (the
# libuv runtime) and respool_config.h (the smart_pool configuration it takes).
include(GNUInstallDirs)

install(TARGETS respool RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS rp_net rp_tcpframe rp_disc rp_config rp_core rp_dns
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES
  ${PROJECT_SOURCE_DIR}/pool/include/respool.h
  ${PROJECT_SOURCE_DIR}/pool/include/respool_net.h
  ${PROJECT_SOURCE_DIR}/pool/include/respool_config.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/respool)

configure_file(${PROJECT_SOURCE_DIR}/cmake/respool.pc.in
  ${PROJECT_BINARY_DIR}/respool.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/respool.pc
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
configure_file(${PROJECT_SOURCE_DIR}/cmake/respoolConfig.cmake.in
  ${PROJECT_BINARY_DIR}/respoolConfig.cmake @ONLY)
configure_file(${PROJECT_SOURCE_DIR}/cmake/respoolConfigVersion.cmake.in
  ${PROJECT_BINARY_DIR}/respoolConfigVersion.cmake @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/respoolConfig.cmake
  ${PROJECT_BINARY_DIR}/respoolConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/respool)

install(FILES ${PROJECT_SOURCE_DIR}/docs/respool.1
  DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${PROJECT_SOURCE_DIR}/dist/respool.service
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/systemd/system)

# `cpack -G DEB` (in the build directory) builds a Debian package of the
# same files under /usr. The binary links libuv, OpenSSL, cJSON and
# nghttp2 dynamically: dpkg-shlibdeps finds the package of each.
set(CPACK_GENERATOR "DEB")
set(CPACK_PACKAGE_NAME "respool")
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGE_VENDOR "respool")
set(CPACK_PACKAGE_CONTACT "respool developers <respool@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "smart resolver pool for DNS tunnels (dnstt, MasterDnsVPN)")
set(CPACK_PACKAGE_DESCRIPTION
  "One local resolver for a DNS tunnel client that spreads its queries over many upstream resolvers, learning rate caps, hedging and copying.")
set(CPACK_PACKAGING_INSTALL_PREFIX "/usr")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION "net")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_RESOURCE_FILE_LICENSE "${PROJECT_SOURCE_DIR}/LICENSE")
include(CPack)
