/* Refused: a shared object without the entry symbol. */
__attribute__((visibility("default"))) int not_a_plugin(void) { return 42; }
