# The Debian package (cpack -G DEB in the build directory): the CLI, the
# models' library, the public headers and the data of cmake/install.cmake,
# under /usr. Its Depends are the shared libraries the binaries link
# (dpkg-shlibdeps) and the -dev packages the public headers include.
#   sudo apt install ./smmu-vp_<version>_<arch>.deb
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME smmu-vp)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_DESCRIPTION "Timed SystemC/TLM-2.0 models of an Arm SMMUv3, DMA masters (NIC, NVMe, camera) and memory, bare-metal drivers running on simulated cores, and the smmu-vp CLI that runs, sweeps and compares scenarios.")
set(CPACK_PACKAGE_CONTACT "smmu-vp developers <smmu-vp@users.noreply.github.com>")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# The public headers include SystemC's, TLM's and nlohmann-json's.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libsystemc-dev (>= 2.3.3), nlohmann-json3-dev (>= 3.10)")
# The package carries everything: no per-component packages.
set(CPACK_DEB_COMPONENT_INSTALL OFF)
include(CPack)
