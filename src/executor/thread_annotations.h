// thread_annotations.h: clang thread-safety analysis for kvexec's locks.
// The macros (GUARDED_BY, REQUIRES, ACQUIRE, RELEASE, ...) expand to clang's
// attributes under clang and to nothing elsewhere (GCC ignores them), and an
// annotated mutex (Mutex, MutexLock, UniqueLock) that the analysis can
// follow: libstdc++'s std::mutex carries no annotations, so a member
// GUARDED_BY a std::mutex would never be checked.
//
// Meant for every component (include "executor/thread_annotations.h"); the
// `clang` preset builds with -Wthread-safety as an error.
//
// Thread safety: Mutex is a std::mutex; MutexLock and UniqueLock are
// std::lock_guard and std::unique_lock over it; SharedMutex is a
// std::shared_mutex with WriterLock / ReaderLock; all usable from any
// thread.
#pragma once

#include <condition_variable>
#include <mutex>
#include <shared_mutex>

#include "executor/cpu_relax.h"

#if defined(__clang__)
#define KVEXEC_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define KVEXEC_THREAD_ANNOTATION(x)
#endif

#define CAPABILITY(x) KVEXEC_THREAD_ANNOTATION(capability(x))
#define SCOPED_CAPABILITY KVEXEC_THREAD_ANNOTATION(scoped_lockable)
#define GUARDED_BY(x) KVEXEC_THREAD_ANNOTATION(guarded_by(x))
#define PT_GUARDED_BY(x) KVEXEC_THREAD_ANNOTATION(pt_guarded_by(x))
#define REQUIRES(...) KVEXEC_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define REQUIRES_SHARED(...) KVEXEC_THREAD_ANNOTATION(requires_shared_capability(__VA_ARGS__))
#define EXCLUDES(...) KVEXEC_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
#define ACQUIRED_BEFORE(...) KVEXEC_THREAD_ANNOTATION(acquired_before(__VA_ARGS__))
#define ACQUIRE(...) KVEXEC_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define RELEASE(...) KVEXEC_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define ACQUIRE_SHARED(...) KVEXEC_THREAD_ANNOTATION(acquire_shared_capability(__VA_ARGS__))
#define RELEASE_SHARED(...) KVEXEC_THREAD_ANNOTATION(release_shared_capability(__VA_ARGS__))
#define RELEASE_GENERIC(...) KVEXEC_THREAD_ANNOTATION(release_generic_capability(__VA_ARGS__))
#define TRY_ACQUIRE(...) KVEXEC_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
#define RETURN_CAPABILITY(x) KVEXEC_THREAD_ANNOTATION(lock_returned(x))
#define ASSERT_CAPABILITY(x) KVEXEC_THREAD_ANNOTATION(assert_capability(x))
#define NO_THREAD_SAFETY_ANALYSIS KVEXEC_THREAD_ANNOTATION(no_thread_safety_analysis)

namespace kvexec::detail {

// A std::mutex the analysis knows as a capability, taken with a short spin
// first. A contended std::mutex puts the caller to sleep in the kernel at
// once, and waking a sleeper costs 5-50 us on a VM whose idle vCPU halts,
// while the sections these mutexes guard last well under a microsecond:
// without the spin, every collision of a front end's wake() with a worker
// on a ready queue cost a sleep and a wake-up (pthread's adaptive mutex
// does the same, but std::mutex cannot be made one).
class CAPABILITY("mutex") Mutex {
  public:
    // About 2-5 us of tries, against a holder that runs on another core.
    static constexpr int kSpinTries = 64;

    void lock() ACQUIRE() {
        for (int i = 0; i < kSpinTries; ++i) {
            if (mutex_.try_lock()) {
                return;
            }
            cpuRelax();
        }
        mutex_.lock();
    }
    void unlock() RELEASE() { mutex_.unlock(); }
    bool try_lock() TRY_ACQUIRE(true) { return mutex_.try_lock(); }
    // Tells the analysis the caller holds this mutex where it cannot see it
    // taken (a callback run under it). Checks nothing at run time.
    void assertHeld() const ASSERT_CAPABILITY(this) {}

    // For std::condition_variable, which waits on a std::unique_lock of a
    // std::mutex (see UniqueLock::native()).
    std::mutex& native() { return mutex_; }

  private:
    std::mutex mutex_;
};

// std::lock_guard over a Mutex.
class SCOPED_CAPABILITY MutexLock {
  public:
    explicit MutexLock(Mutex& mutex) ACQUIRE(mutex) : mutex_(mutex) { mutex_.lock(); }
    ~MutexLock() RELEASE() { mutex_.unlock(); }
    MutexLock(const MutexLock&) = delete;
    MutexLock& operator=(const MutexLock&) = delete;

  private:
    Mutex& mutex_;
};

// std::unique_lock over a Mutex: may be released and taken again, and a
// std::condition_variable waits on native(). The analysis sees a condition
// variable wait as holding the lock throughout, which is what the code
// after the wait may assume.
class SCOPED_CAPABILITY UniqueLock {
  public:
    explicit UniqueLock(Mutex& mutex) ACQUIRE(mutex) : mutex_(mutex) { relock(); }
    ~UniqueLock() RELEASE() = default;
    UniqueLock(const UniqueLock&) = delete;
    UniqueLock& operator=(const UniqueLock&) = delete;

    void lock() ACQUIRE() { relock(); }
    void unlock() RELEASE() { lock_.unlock(); }

    std::unique_lock<std::mutex>& native() { return lock_; }

  private:
    // Through Mutex::lock(), for its spin; lock_ then adopts the mutex.
    void relock() NO_THREAD_SAFETY_ANALYSIS {
        mutex_.lock();
        lock_ = std::unique_lock<std::mutex>(mutex_.native(), std::adopt_lock);
    }

    Mutex& mutex_;
    std::unique_lock<std::mutex> lock_;
};

// A std::shared_mutex the analysis knows as a capability: held
// exclusively (WriterLock) or shared (ReaderLock).
class CAPABILITY("shared mutex") SharedMutex {
  public:
    void lock() ACQUIRE() { mutex_.lock(); }
    void unlock() RELEASE() { mutex_.unlock(); }
    void lock_shared() ACQUIRE_SHARED() { mutex_.lock_shared(); }
    void unlock_shared() RELEASE_SHARED() { mutex_.unlock_shared(); }

  private:
    std::shared_mutex mutex_;
};

// std::unique_lock over a SharedMutex, for the scope.
class SCOPED_CAPABILITY WriterLock {
  public:
    explicit WriterLock(SharedMutex& mutex) ACQUIRE(mutex) : mutex_(mutex) { mutex_.lock(); }
    ~WriterLock() RELEASE() { mutex_.unlock(); }
    WriterLock(const WriterLock&) = delete;
    WriterLock& operator=(const WriterLock&) = delete;

  private:
    SharedMutex& mutex_;
};

// std::shared_lock over a SharedMutex, for the scope.
class SCOPED_CAPABILITY ReaderLock {
  public:
    explicit ReaderLock(SharedMutex& mutex) ACQUIRE_SHARED(mutex) : mutex_(mutex) {
        mutex_.lock_shared();
    }
    ~ReaderLock() RELEASE_GENERIC() { mutex_.unlock_shared(); }
    ReaderLock(const ReaderLock&) = delete;
    ReaderLock& operator=(const ReaderLock&) = delete;

  private:
    SharedMutex& mutex_;
};

}  // namespace kvexec::detail
