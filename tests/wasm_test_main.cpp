// main() of the kernel tests built as a wasm program on the relaxed-SIMD
// objects (CMakeLists.txt; run by tools/test.sh under node). It is linked by
// em++ on clang-19 (the relaxed route, docs/TOOLCHAIN.md). Emscripten 3.1.6's glue
// calls the module's export named "main", but clang-19 names a
// main(argc, argv) __main_argc_argv, so with GoogleTest's own gtest_main.cc
// the program would link and run no test at all. This one is exported as
// "main" by name.
#include <gtest/gtest.h>

__attribute__((export_name("main"))) int aw_wasm_test_main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
