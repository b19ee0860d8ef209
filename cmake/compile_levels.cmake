# RelWithDebInfo (the default build) with -g1: line tables and function
# names, what perf, callgrind and a crash's backtrace need, in 16 to 33 %
# less compile time than -g (docs/performance.md, "Build and CI time").
# Debug info does not change the code: results and speed are the same.
# SMMU_VP_FULL_DEBUG_INFO=ON keeps -g, for local variables in a debugger.
if(NOT SMMU_VP_FULL_DEBUG_INFO)
  add_compile_options($<$<CONFIG:RelWithDebInfo>:-g1>)
endif()

# Test programs compile without optimisation: they only drive the code under
# test (models/, sw/, platform/ libraries), which keeps the build type's
# flags, so every simulated value is the same. At -O2 -g they were two thirds
# of a full build; at -O0 -g1 a test file compiles in a quarter to a half of the time
# (docs/performance.md, "Build and CI time"). Only in the default
# RelWithDebInfo build: a Debug build is unoptimised anyway, and the
# sanitizer and fuzz builds keep their own -O1 everywhere (so GCC's flow
# warnings still see the tests in CI).
#
# Not for code linked into smmu-vp itself: template code that an -O0 object
# and an -O2 object both instantiate is kept once by the linker, from either,
# so the simulation could run -O0 copies (tried on the command line and the
# configuration: seed001_nic_100g took 0.7 % more host instructions, with the
# same results).
#
# SMMU_VP_UNOPTIMISED: whether this build does so.
# smmu_vp_unoptimised(target [DEBUG_FLAG]): the target's own sources at -O0,
# with DEBUG_FLAG (e.g. -g1: line tables, enough for a failing test's
# backtrace) in place of the build type's -g when given.
if(NOT SMMU_VP_SANITIZE AND NOT SMMU_VP_FUZZ AND CMAKE_BUILD_TYPE STREQUAL "RelWithDebInfo")
  set(SMMU_VP_UNOPTIMISED ON)
else()
  set(SMMU_VP_UNOPTIMISED OFF)
endif()
function(smmu_vp_unoptimised target)
  if(NOT SMMU_VP_UNOPTIMISED)
    return()
  endif()
  target_compile_options(${target} PRIVATE -O0 ${ARGN})
endfunction()
