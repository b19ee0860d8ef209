#include "firmware_loader.h"

#include <dlfcn.h>
#include <setjmp.h>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <stdexcept>

namespace smmu_vp {

namespace {

// A firmware's constructors run inside dlopen: one that crashes, aborts or
// calls exit() is stopped here and reported as a bad image, instead of
// taking the simulator down with nothing said. (The dynamic loader's own
// lock stays taken by this thread; the run ends at once after.)
constexpr int kLoadSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
sigjmp_buf g_load_escape;
volatile std::sig_atomic_t g_loading = 0;
volatile std::sig_atomic_t g_load_signal = 0;
volatile int g_load_exit = -1;

void on_load_fault(int signo) {
  if (!g_loading) {
    std::signal(signo, SIG_DFL);
    std::raise(signo);
    return;
  }
  g_load_signal = signo;
  siglongjmp(g_load_escape, 1);
}

void on_load_exit(int status, void*) {
  if (!g_loading) return;
  g_load_exit = status;
  siglongjmp(g_load_escape, 1);
}

// dlopen with the firmware's constructors contained; throws saying what they did.
void* open_contained(const std::string& path, const std::string& shown) {
  struct sigaction old[std::size(kLoadSignals)];
  struct sigaction sa {};
  sa.sa_handler = on_load_fault;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_NODEFER;
  for (size_t i = 0; i < std::size(kLoadSignals); ++i) sigaction(kLoadSignals[i], &sa, &old[i]);
  on_exit(on_load_exit, nullptr);
  g_load_signal = 0;
  g_load_exit = -1;
  void* handle = nullptr;
  if (sigsetjmp(g_load_escape, 1) == 0) {
    g_loading = 1;
    handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  }
  g_loading = 0;
  for (size_t i = 0; i < std::size(kLoadSignals); ++i) sigaction(kLoadSignals[i], &old[i], nullptr);
  if (g_load_signal)
    throw std::runtime_error("firmware '" + shown + "': crashed while loading (in its constructors): " +
                             strsignal(g_load_signal));
  if (g_load_exit >= 0)
    throw std::runtime_error("firmware '" + shown + "': called exit(" + std::to_string(g_load_exit) +
                             ") while loading (in its constructors)");
  if (!handle) throw std::runtime_error("firmware '" + shown + "': cannot load: " + dlerror());
  return handle;
}

}  // namespace

FirmwareImage::FirmwareImage(const std::string& path) {
  // A path without a slash would make dlopen search the library path instead.
  const std::string p = path.find('/') == std::string::npos ? "./" + path : path;
  handle_ = open_contained(p, path);
  app_ = static_cast<const hal_app*>(dlsym(handle_, HAL_FIRMWARE_SYMBOL));
  if (!app_) {
    dlclose(handle_);
    handle_ = nullptr;
    throw std::runtime_error("firmware '" + path + "': no symbol '" HAL_FIRMWARE_SYMBOL
                             "' (define it with HAL_FIRMWARE(...) from hal/hal.h)");
  }
  if (!app_->name || !app_->name[0] || !app_->main || !app_->summary) {
    dlclose(handle_);
    handle_ = nullptr;
    throw std::runtime_error("firmware '" + path + "': " HAL_FIRMWARE_SYMBOL " needs a name, a summary and a main function");
  }
}

FirmwareImage::~FirmwareImage() {
  if (handle_) dlclose(handle_);
}

}  // namespace smmu_vp
