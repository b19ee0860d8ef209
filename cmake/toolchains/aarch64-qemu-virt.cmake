# Cross toolchain for the bare-metal qemu-virt image (sw/ports/qemu-virt):
# Debian's aarch64-linux-gnu-gcc (package gcc-aarch64-linux-gnu), used
# freestanding: no libc, no startup files, nothing from the target's sysroot.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(_prefix aarch64-linux-gnu-)
find_program(CMAKE_C_COMPILER ${_prefix}gcc REQUIRED)
set(CMAKE_ASM_COMPILER ${CMAKE_C_COMPILER})
find_program(CMAKE_OBJCOPY ${_prefix}objcopy)
find_program(CMAKE_SIZE ${_prefix}size)

# A Generic system cannot link a test program without startup files.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
