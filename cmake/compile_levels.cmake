# Code that only runs once per run (the command line and the configuration)
# or only drives the code under test (test programs) compiles without
# optimisation; the simulation (models/, sw/, the devices, the HAL backend,
# the platform) keeps the build type's flags, so every simulated value and
# the simulation's speed are the same. At -O2 -g that code took half of a
# full build, and compiles in about half the time at -O0 (docs/performance.md,
# "Build and CI time"). Only in the default RelWithDebInfo build: a Debug
# build is unoptimised anyway, and the sanitizer and fuzz builds keep their
# own -O1 everywhere (so GCC's flow warnings still see these sources in CI).
#
# smmu_vp_unoptimised(target [DEBUG_FLAG]): the target's own sources at -O0,
# with DEBUG_FLAG (e.g. -g1: line tables, enough for a failing test's
# backtrace) in place of the build type's -g when given.
function(smmu_vp_unoptimised target)
  if(SMMU_VP_SANITIZE OR SMMU_VP_FUZZ OR NOT CMAKE_BUILD_TYPE STREQUAL "RelWithDebInfo")
    return()
  endif()
  target_compile_options(${target} PRIVATE -O0 ${ARGN})
endfunction()
