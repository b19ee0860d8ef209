# Project-wide warnings and sanitizers, applied to our own targets only.
set(SMMU_VP_WARNINGS -Wall -Wextra -Wshadow=local -Wformat=2 -Wundef)
set(SMMU_VP_CXX_WARNINGS ${SMMU_VP_WARNINGS} -Wnon-virtual-dtor -Woverloaded-virtual)
set(SMMU_VP_C_WARNINGS ${SMMU_VP_WARNINGS} -Wstrict-prototypes -Wmissing-prototypes)
if(SMMU_VP_WERROR)
  list(APPEND SMMU_VP_CXX_WARNINGS -Werror)
  list(APPEND SMMU_VP_C_WARNINGS -Werror)
endif()

if(SMMU_VP_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()

# smmu_vp_warnings(target): our warning set for the target's C and C++ sources.
function(smmu_vp_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:${SMMU_VP_CXX_WARNINGS}>
    $<$<COMPILE_LANGUAGE:C>:${SMMU_VP_C_WARNINGS}>)
endfunction()
