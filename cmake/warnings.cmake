# Project-wide warnings and sanitizers, applied to our own targets only.
set(SMMU_VP_WARNINGS -Wall -Wextra -Wshadow=local -Wformat=2 -Wundef)
# clang (the fuzz build) spells GCC's -Wshadow=local differently.
if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  set(SMMU_VP_WARNINGS -Wall -Wextra -Wshadow-uncaptured-local -Wformat=2 -Wundef)
endif()
set(SMMU_VP_CXX_WARNINGS ${SMMU_VP_WARNINGS} -Wnon-virtual-dtor -Woverloaded-virtual)
set(SMMU_VP_C_WARNINGS ${SMMU_VP_WARNINGS} -Wstrict-prototypes -Wmissing-prototypes)
if(SMMU_VP_WERROR)
  list(APPEND SMMU_VP_CXX_WARNINGS -Werror)
  list(APPEND SMMU_VP_C_WARNINGS -Werror)
endif()

# -O1 -g1 (after the build type's -O2 -g, so they win): ASan's recommended
# level, and line tables are all its reports need. Compiling is about 2.5x
# faster than -O2 -g under the sanitizers (cli_test.cc: 96 s -> 39 s), which
# is most of CI's time.
if(SMMU_VP_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
                      -O1 -g1)
  add_link_options(-fsanitize=address,undefined)
endif()

# The fuzz build: every library is instrumented for coverage and sanitizers;
# the harness executables add -fsanitize=fuzzer (libFuzzer's main) themselves.
if(SMMU_VP_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "SMMU_VP_FUZZ needs clang (configure with CC=clang CXX=clang++; `make fuzz` does)")
  endif()
  set(SMMU_VP_FUZZ_FLAGS -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer
      -fno-sanitize-recover=undefined)
  add_compile_options(${SMMU_VP_FUZZ_FLAGS})
  add_link_options(-fsanitize=address,undefined)
endif()

# smmu_vp_warnings(target): our warning set for the target's C and C++ sources.
function(smmu_vp_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:${SMMU_VP_CXX_WARNINGS}>
    $<$<COMPILE_LANGUAGE:C>:${SMMU_VP_C_WARNINGS}>)
endfunction()
