# What `cmake --install` puts in a prefix, and the Debian package (cpack -G DEB)
# built from the same rules; docs/embedding.md says how another platform uses
# them.
#   bin/smmu-vp                            the CLI
#   lib/libsmmu_vp.so.X.Y                  the models (smmu_vp::smmu)
#   include/smmu_vp/...                    the public headers, below
#   lib/cmake/smmu_vp/                     find_package(smmu_vp CONFIG)
#   lib/pkgconfig/smmu_vp.pc               pkg-config --cflags --libs smmu_vp
#   share/smmu-vp/platform/, traces/       profiles, scenarios, sample traces
#   share/doc/smmu-vp/                     README and docs
include(CMakePackageConfigHelpers)

# The public headers, relative to models/: the SMMU module and its
# configuration, the device models with the register headers their drivers
# share, the memory and router, the StreamID extension, the interrupt
# interface and its signal adapter, the stats registry, and what those
# include. Everything else in models/ is internal; tests/install checks that
# each of these compiles alone from the installed prefix.
set(SMMU_VP_PUBLIC_HEADERS
  common/device_atc.h
  common/invalid_config.h
  common/irq_signals.h
  common/irq_sink.h
  common/register_watch.h
  common/resource.h
  common/sim_time.h
  common/stats.h
  common/stream_id_extension.h
  common/tlm_time.h
  common/trace.h
  memory/address_map.h
  memory/dram.h
  memory/dram_core.h
  memory/router.h
  smmu/ats.h
  smmu/features.h
  smmu/registers.h
  smmu/smmu.h
  smmu/smmu_config.h
  dma/dma_engine.h
  dma/dma_engine_core.h
  dma/dma_registers.h
  nic/nic.h
  nic/nic_core.h
  nic/nic_regs.h
  nic/nic_traffic.h
  nvme/nvme.h
  nvme/nvme_core.h
  nvme/nvme_regs.h
  camera/camera.h
  camera/camera_core.h
  camera/camera_regs.h
)
set(SMMU_VP_INCLUDE_DIR ${CMAKE_INSTALL_INCLUDEDIR}/smmu_vp)
foreach(h IN LISTS SMMU_VP_PUBLIC_HEADERS)
  get_filename_component(dir ${h} DIRECTORY)
  install(FILES ${PROJECT_SOURCE_DIR}/models/${h} DESTINATION ${SMMU_VP_INCLUDE_DIR}/${dir} COMPONENT dev)
endforeach()
# The SMMU's table, descriptor and register layouts in C, as our drivers use
# them: what a master or firmware needs to build stream tables and page tables.
install(FILES ${PROJECT_SOURCE_DIR}/sw/drivers/smmu/smmu_hw.h DESTINATION ${SMMU_VP_INCLUDE_DIR}/drivers/smmu COMPONENT dev)

if(NOT SMMU_VP_SANITIZE AND NOT SMMU_VP_FUZZ)
  # Every symbol the models use is in the library or its declared dependencies.
  target_link_options(smmu_vp_shared PRIVATE -Wl,--no-undefined)
endif()
install(TARGETS smmu_vp_shared smmu_vp_systemc EXPORT smmu_vp_targets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT lib NAMELINK_COMPONENT dev)
set_target_properties(smmu_vp_systemc PROPERTIES EXPORT_NAME systemc)
install(EXPORT smmu_vp_targets NAMESPACE smmu_vp:: FILE smmu_vpTargets.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/smmu_vp COMPONENT dev)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/smmu_vpConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/smmu_vpConfig.cmake
                              INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/smmu_vp)
# 0.x: a new minor version may change the ABI.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/smmu_vpConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/smmu_vpConfig.cmake ${PROJECT_BINARY_DIR}/smmu_vpConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/smmu_vp COMPONENT dev)
# The .pc file finds its prefix from where it is, so an installation moved
# (cmake --install --prefix, DESTDIR, an unpacked package) still works.
file(RELATIVE_PATH SMMU_VP_PC_TO_PREFIX ${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
configure_file(${PROJECT_SOURCE_DIR}/cmake/smmu_vp.pc.in ${PROJECT_BINARY_DIR}/smmu_vp.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/smmu_vp.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT dev)

# The CLI and what its scenarios refer to, in the layout they expect
# (a scenario names its platform as ../platforms/x.json, a trace as
# ../../traces/samples/y.trace.gz).
install(TARGETS smmu-vp RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT cli)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/platform/platforms ${PROJECT_SOURCE_DIR}/platform/scenarios
        DESTINATION ${CMAKE_INSTALL_DATADIR}/smmu-vp/platform COMPONENT cli)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/traces/samples DESTINATION ${CMAKE_INSTALL_DATADIR}/smmu-vp/traces COMPONENT cli)
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/smmu-vp COMPONENT cli)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/smmu-vp COMPONENT cli)
