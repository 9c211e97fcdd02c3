// The persistent worker pool behind parallel_for. Starting a thread per parallel_for cost some 20 us
// and a page-faulting stack each time; the workers here are started once (lazily, up to the thread
// count asked for). Between jobs a worker first watches for the next one for a short while (an
// inference starts a job every few microseconds, and waking a sleeping thread takes longer than many of
// its jobs), then sleeps on a condition variable.
#include "qonnx/exec/threads.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace qonnx::exec {
namespace {

thread_local bool in_share = false;  // set while this thread runs a share: nested jobs run inline

// One parallel_for call. Lives on the caller's stack: the caller returns only when every share is done
// and no worker is still inside.
struct Job {
  detail::ShareFn share;
  void* context;
  int64_t shares;
  std::atomic<int64_t> next{0};  // the next unclaimed share
  int64_t unfinished;            // guarded by the pool's mutex, as is workers_inside
  int workers_inside = 0;
};

// Runs unclaimed shares of `job` until none is left; returns how many this thread ran.
int64_t claim_shares(Job& job) {
  in_share = true;
  int64_t ran = 0;
  for (int64_t s; (s = job.next.fetch_add(1, std::memory_order_relaxed)) < job.shares; ++ran)
    job.share(job.context, s, job.shares);
  in_share = false;
  return ran;
}

class WorkerPool {
 public:
  ~WorkerPool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    for (std::thread& t : workers_) t.join();
  }

  // False when another thread is using the pool (the caller then runs the job alone).
  bool run(int64_t shares, int helpers, detail::ShareFn share, void* context) {
    std::unique_lock<std::mutex> busy(busy_, std::try_to_lock);
    if (!busy.owns_lock()) return false;
    Job job;
    job.share = share, job.context = context, job.shares = shares, job.unfinished = shares;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      while (static_cast<int>(workers_.size()) < helpers) workers_.emplace_back([this] { work(); });
      job_ = &job;
      wanted_ = helpers;
      posted_.fetch_add(1, std::memory_order_release);
    }
    if (helpers == static_cast<int>(workers_.size())) {
      wake_.notify_all();
    } else {
      for (int i = 0; i < helpers; ++i) wake_.notify_one();
    }
    const int64_t ran = claim_shares(job);
    std::unique_lock<std::mutex> lock(mutex_);
    job.unfinished -= ran;
    // The helpers' last shares usually end within microseconds: watch for that before sleeping, as the
    // workers watch for jobs (sleeping here cost a context switch and a wake-up per job: conv1d at batch 1,
    // 2 threads, 1.2-1.7 switches per run and a median of 0.23-0.27 ms, against 0.19-0.20 ms watching).
    const auto finished = [&] { return job.unfinished == 0 && job.workers_inside == 0; };
    lock.unlock();
    watch(kWatchShares, [&] {
      std::lock_guard<std::mutex> held(mutex_);
      return finished();
    });
    lock.lock();
    done_.wait(lock, finished);
    job_ = nullptr;  // workers woken from now on go back to sleep
    wanted_ = 0;
    return true;
  }

 private:
  void work() {
    for (;;) {
      Job* job;
      // Watch for a job posted after the last one this worker saw, for up to kWatchJobs.
      const uint64_t seen = posted_.load(std::memory_order_acquire);
      watch(kWatchJobs, [&] { return posted_.load(std::memory_order_acquire) != seen; });
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return stopping_ || (job_ != nullptr && wanted_ > 0); });
        if (stopping_) return;
        job = job_;
        --wanted_;
        ++job->workers_inside;
      }
      const int64_t ran = claim_shares(*job);
      std::lock_guard<std::mutex> lock(mutex_);
      job->unfinished -= ran;
      if (--job->workers_inside == 0 && job->unfinished == 0) done_.notify_one();
    }
  }

  // How long the caller watches for the helpers' last shares before it sleeps.
  static constexpr std::chrono::microseconds kWatchShares{50};
  // How long a worker watches for the next job before it sleeps: longer than the serial stretches between an
  // inference's jobs (a softmax, a small layer that stays on one thread: up to some 100 us at batch 1), so
  // that a job rarely has to wake a sleeping worker (a futex wake and a context switch cost 10-30 us on
  // these VMs: attention at batch 1 on 2 threads switched 4 times a run with 34 us of watching and ran slower
  // than on one thread), short enough that an idle process stops using the core soon. Timed, not counted: a
  // pause takes 17 ns on Zen 5 and about 40 on recent Intel cores.
  static constexpr std::chrono::microseconds kWatchJobs{250};
  static void pause() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
  // Calls `ready` until it is true (returns true) or `span` has passed (false), pausing between calls.
  template <typename Ready>
  static bool watch(std::chrono::microseconds span, Ready&& ready) {
    const auto until = std::chrono::steady_clock::now() + span;
    for (;;) {
      for (int i = 0; i < 64; ++i) {  // the clock read once per 64 checks
        if (ready()) return true;
        pause();
      }
      if (std::chrono::steady_clock::now() >= until) return false;
    }
  }

  std::atomic<uint64_t> posted_{0};  // jobs posted so far
  std::mutex busy_;   // held by the thread whose job the pool runs
  std::mutex mutex_;  // guards the members below and a job's counters
  std::condition_variable wake_, done_;
  std::vector<std::thread> workers_;
  bool stopping_ = false;
  Job* job_ = nullptr;  // the job workers may join
  int wanted_ = 0;      // workers still to join it
};

WorkerPool& pool() {
  static WorkerPool p;
  return p;
}

}  // namespace

void set_threads(int n) {
  if (n <= 0) n = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  detail::thread_count().store(n, std::memory_order_relaxed);
}

namespace detail {

void run_shares(int64_t shares, int helpers, ShareFn share, void* context) {
  if (helpers <= 0 || in_share || !pool().run(shares, helpers, share, context))
    for (int64_t s = 0; s < shares; ++s) share(context, s, shares);
}

}  // namespace detail
}  // namespace qonnx::exec
