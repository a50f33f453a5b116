// Process-wide settings of a process that serves the extender, made here once rather than by the
// server objects, which a process may hold several of (the verbs, the operations and the reports
// listeners) and which tests and benchmarks also create.
//
// SetUpServingProcess(), once at start, before other threads start or allocate: `gpusched serve`,
// the tests' SampleServer and the benchmarks call it.
//  - SIGPIPE is ignored: OpenSSL writes to sockets with write(), which takes no MSG_NOSIGNAL, so a
//    TLS client closing mid-answer would otherwise end the process (server/http_transport.h).
//  - One allocator arena: request bodies and their decoded forms can be tens of MB, and glibc gives
//    back only the main heap's top and free blocks inside heaps, never the tops of its per-thread
//    heaps; with every thread on the main heap a burst of large requests does not stay resident
//    after it is answered. (Mapping large blocks on their own instead costs a TLB shootdown per
//    unmap in a multi-threaded process: 5-7x slower full-Nodes requests on a 2-vCPU VM.)
//
// ReleaseFreeMemory() gives free heap pages back to the system (malloc_trim). ServerApp installs it
// as its listeners' `after_large_requests`, which the transport calls a second after a burst of
// large requests ends, never during one: a trim walks every free block while holding the
// allocator's lock.
#pragma once

namespace gpusched {

void SetUpServingProcess();
void ReleaseFreeMemory();

}  // namespace gpusched
