// A program that names GCC's OpenMP runtime (libgomp.so.1) in its dynamic section, whatever
// compiler builds the tests, for ccnuma-run's note that libgomp has no OMPT (issue 24).
int main() { return 0; }
