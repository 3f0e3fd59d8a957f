// Links against the installed kvexec and runs one task on the default
// threaded backend that is built, then on Manual.
#include <kvexec/executor_pool.h>
#include <kvexec/manual_executor_pool.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <memory>
#include <mutex>
#include <stdexcept>

namespace {
class Owner : public kvexec::Taskable {
  public:
    const std::string& name() const override { return name_; }

  private:
    std::string name_ = "package-test";
};

std::unique_ptr<kvexec::ExecutorPool> threadedPool() {
    try {
        return kvexec::ExecutorPool::create();
    } catch (const std::invalid_argument&) {
        return kvexec::ExecutorPool::create(kvexec::Backend::Classic);
    }
}
}  // namespace

int main() {
    Owner owner;
    auto pool = threadedPool();
    pool->registerTaskable(owner);
    std::mutex m;
    std::condition_variable cv;
    bool ran = false;
    pool->schedule(std::make_shared<kvexec::LambdaTask>(owner, kvexec::TaskType::NonIO, "hello",
                                                        [&](kvexec::LambdaTask&) {
                                                            std::lock_guard lock(m);
                                                            ran = true;
                                                            cv.notify_all();
                                                            return false;
                                                        }));
    {
        std::unique_lock lock(m);
        if (!cv.wait_for(lock, std::chrono::seconds(30), [&] { return ran; })) {
            std::puts("package test: the task did not run");
            return 1;
        }
    }
    pool->unregisterTaskable(owner, false);

    kvexec::ManualExecutorPool manual;
    manual.registerTaskable(owner);
    manual.schedule(std::make_shared<kvexec::LambdaTask>(
        owner, kvexec::TaskType::Writer, "manual", [](kvexec::LambdaTask&) { return false; }));
    const bool manualRan = manual.runReady(kvexec::TaskType::Writer) == 1;
    manual.unregisterTaskable(owner, false);
    std::printf("package test: %s backend ran a task; Manual ran %s\n",
                std::string(pool->backendName()).c_str(), manualRan ? "one" : "none");
    return manualRan ? 0 : 1;
}
