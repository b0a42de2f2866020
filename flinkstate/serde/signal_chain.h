// Internal to flinkstate/serde: handing a signal on to the handler that was
// installed before ours (the SIGBUS guard of mapped_file.cc and the SIGSEGV
// fault handler of sparse_mapping.cc). Async-signal-safe.
#ifndef FLINKSTATE_SERDE_SIGNAL_CHAIN_H_
#define FLINKSTATE_SERDE_SIGNAL_CHAIN_H_

#include <signal.h>

namespace flinkstate::serde::internal {

// Installs `handler` for `sig` (SA_SIGINFO, not blocked in itself: a fault
// in the handler is reported), keeping the handler it replaces in
// `*previous` for `ChainSignal`. Not async-signal-safe: call once, outside
// handlers.
inline void InstallChainedHandler(int sig, void (*handler)(int, siginfo_t*, void*),
                                  struct sigaction* previous) {
  struct sigaction sa = {};
  sa.sa_sigaction = handler;
  sa.sa_flags = SA_SIGINFO | SA_NODEFER;
  sigemptyset(&sa.sa_mask);
  ::sigaction(sig, &sa, previous);
}

// Calls `previous` for a signal that was not ours. Where there was none (or
// it was SIG_DFL/SIG_IGN) restores the default action, so that the fault
// repeats on return from our handler and ends the process as it would have
// without us.
inline void ChainSignal(const struct sigaction& previous, int sig, siginfo_t* info,
                        void* context) {
  if (previous.sa_flags & SA_SIGINFO) {
    if (previous.sa_sigaction != nullptr) {
      previous.sa_sigaction(sig, info, context);
      return;
    }
  } else if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) {
    previous.sa_handler(sig);
    return;
  }
  ::signal(sig, SIG_DFL);
}

}  // namespace flinkstate::serde::internal

#endif  // FLINKSTATE_SERDE_SIGNAL_CHAIN_H_
