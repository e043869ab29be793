# The warning list, applied to every target of ours. Each flag earns its place.
set(GC_WARNINGS
	-Wall -Wextra              # the baseline
	-Wpedantic                 # C17 without extensions
	-Wshadow                   # a local hiding another is a bug waiting to happen
	-Wstrict-prototypes        # f() means "no arguments" only with (void)
	-Wmissing-prototypes       # every non-static function has a header declaration
	-Wold-style-definition
	-Wpointer-arith            # no arithmetic on void *
	-Wcast-qual                # do not silently drop const
	-Wwrite-strings            # string literals are const char *
	-Wformat=2                 # printf-style calls with checked, literal formats
	-Wvla                      # no variable-length arrays: stack size stays bounded
	-Wundef                    # #if on an undefined macro is a typo
	-Wnull-dereference
	-Wdouble-promotion
	-Wimplicit-fallthrough     # switch fall-through must be marked
)
if(CMAKE_C_COMPILER_ID STREQUAL "GNU")
	list(APPEND GC_WARNINGS -Wduplicated-cond -Wlogical-op -Wjump-misses-init)
endif()
if(GC_WERROR)
	list(APPEND GC_WARNINGS -Werror)
endif()
add_compile_options(${GC_WARNINGS})
