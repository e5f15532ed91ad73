// How a forked gtest process ends: fast, without tearing down what the
// server built before the fork.
//
// A test binary's exit runs the destructors of every static object and the
// fini functions of every library. For a forked test those were built by
// the server, once, for all tests; tearing them down in each child is pure
// cost (libtorch: its operator registry unregisters thousands of kernels,
// touching and copying pages shared with the server). So once the test's
// `main` has returned, the child runs only what the test itself set up at
// exit, and what users rely on at exit:
//   - exit handlers registered after the fork (atexit, and the destructors
//     of function-local statics first built during the test), last first,
//     as exit() would;
//   - stdio flushed;
//   - coverage data written (gcov's __gcov_dump, LLVM's
//     __llvm_profile_write_file) and LeakSanitizer's check
//     (__lsan_do_leak_check), where the binary has them;
// then _exit with main's status. A test whose main returned non-zero exits
// the ordinary way, as does a request with "exit": "full" (the source's
// `fork-exit = "full"`, and ranktest's probe of each binary's teardown:
// see ForkServer).
#include "forkserver/fast_exit.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

using Handler = void (*)(void*);
using RealCxaAtexit = int (*)(Handler, void*, void*);

struct ExitHandler {
  Handler function;
  void* argument;
};

// Registered in the forked test; fixed storage, as a registration may come
// from anywhere (even a static initialiser of a library the test loads).
constexpr int kMostHandlers = 4096;
ExitHandler g_handlers[kMostHandlers];
int g_handler_count = 0;
bool g_too_many = false;  // then the ordinary exit runs instead
bool g_in_test = false;   // set in the forked child
pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

RealCxaAtexit real_cxa_atexit() {
  static RealCxaAtexit real =
      reinterpret_cast<RealCxaAtexit>(::dlsym(RTLD_NEXT, "__cxa_atexit"));
  return real;
}

// The address of a function the executable defines but does not export
// (gcov's runtime is linked in statically, with hidden symbols), from its
// own symbol table; nullptr when it has none (stripped, or not linked).
void* executable_symbol(const char* name) {
  const int fd = ::open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return nullptr;
  struct stat file {};
  void* found = nullptr;
  if (::fstat(fd, &file) == 0 && file.st_size > static_cast<off_t>(sizeof(ElfW(Ehdr)))) {
    const auto size = static_cast<std::size_t>(file.st_size);
    void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map != MAP_FAILED) {
      const auto* bytes = static_cast<const unsigned char*>(map);
      const auto* header = static_cast<const ElfW(Ehdr)*>(map);
      const bool elf = std::memcmp(header->e_ident, ELFMAG, SELFMAG) == 0 &&
                       header->e_shoff + header->e_shnum * sizeof(ElfW(Shdr)) <= size;
      const auto* sections =
          elf ? reinterpret_cast<const ElfW(Shdr)*>(bytes + header->e_shoff) : nullptr;
      for (int i = 0; elf && !found && i < header->e_shnum; ++i) {
        if (sections[i].sh_type != SHT_SYMTAB || sections[i].sh_link >= header->e_shnum) continue;
        const auto& names = sections[sections[i].sh_link];
        if (sections[i].sh_offset + sections[i].sh_size > size ||
            names.sh_offset + names.sh_size > size)
          continue;
        const auto* symbols = reinterpret_cast<const ElfW(Sym)*>(bytes + sections[i].sh_offset);
        const auto count = sections[i].sh_size / sizeof(ElfW(Sym));
        for (std::size_t s = 0; s < count; ++s) {
          if (symbols[s].st_name >= names.sh_size || symbols[s].st_value == 0) continue;
          const char* symbol = reinterpret_cast<const char*>(bytes + names.sh_offset) +
                               symbols[s].st_name;
          if (std::strcmp(symbol, name) != 0) continue;
          // The executable is the first object: its load bias makes the
          // symbol's value an address (0 for a non-PIE binary).
          ElfW(Addr) bias = 0;
          ::dl_iterate_phdr(
              [](dl_phdr_info* info, std::size_t, void* out) {
                *static_cast<ElfW(Addr)*>(out) = info->dlpi_addr;
                return 1;
              },
              &bias);
          found = reinterpret_cast<void*>(bias + symbols[s].st_value);
          break;
        }
      }
      ::munmap(map, size);
    }
  }
  ::close(fd);
  return found;
}

void call_if_present(void* function) {
  if (function) reinterpret_cast<void (*)()>(function)();
}

// What a coverage or LeakSanitizer build does at exit, found once in the
// server (an executable's symbol table can be large).
void* g_gcov_dump = nullptr;
void* g_profile_write = nullptr;
void* g_leak_check = nullptr;

void* exported_or_own(const char* name) {
  if (void* exported = ::dlsym(RTLD_DEFAULT, name)) return exported;
  return executable_symbol(name);
}

}  // namespace

// Every exit handler registration of the process passes here (atexit too:
// glibc implements it with __cxa_atexit). Before the fork they are the
// server's and go to the C library; in the test they are kept here.
extern "C" int __cxa_atexit(Handler function, void* argument, void* dso) {
  if (g_in_test) {
    ::pthread_mutex_lock(&g_lock);
    const bool kept = g_handler_count < kMostHandlers;
    if (kept) g_handlers[g_handler_count++] = ExitHandler{function, argument};
    else g_too_many = true;
    ::pthread_mutex_unlock(&g_lock);
    if (kept) return 0;
  }
  const auto real = real_cxa_atexit();
  return real ? real(function, argument, dso) : -1;
}

namespace ranktest::forkserver {

void prepare_exit() {
  g_gcov_dump = exported_or_own("__gcov_dump");
  g_profile_write = exported_or_own("__llvm_profile_write_file");
  g_leak_check = ::dlsym(RTLD_DEFAULT, "__lsan_do_leak_check");
}

void begin_test(bool fast_exit) { g_in_test = fast_exit; }

int end_test(int status) {
  // The ordinary exit: where the fast one cannot account for every
  // handler, and for a test that did not pass (main's status not 0): its
  // teardown is checked as the binary alone would check it, and such a
  // test runs again as a fresh process anyway.
  if (!g_in_test || g_too_many || status != 0) return status;
  // Handlers registered in the test itself, last first, as exit() runs
  // them; one may register another.
  for (;;) {
    ::pthread_mutex_lock(&g_lock);
    if (g_handler_count == 0) {
      ::pthread_mutex_unlock(&g_lock);
      break;
    }
    const ExitHandler handler = g_handlers[--g_handler_count];
    ::pthread_mutex_unlock(&g_lock);
    handler.function(handler.argument);
  }
  std::fflush(nullptr);
  // What a coverage or LeakSanitizer build writes at exit, written now.
  call_if_present(g_gcov_dump);
  call_if_present(g_profile_write);
  call_if_present(g_leak_check);
  std::fflush(nullptr);
  ::_exit(status);
}

}  // namespace ranktest::forkserver
