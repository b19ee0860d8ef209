// libsystemc.so owns a main() that calls sc_main; the harnesses link
// libFuzzer's main instead and run no simulation, but the library still needs
// the symbol to link.
extern "C" int sc_main(int, char**) { return 0; }
