// manual_pool.cc: ManualExecutorPool over the Manual scheduler; the caller
// drives it with runReady()/runNext().
#include "executor/manual/manual_scheduler.h"
#include "kvexec/manual_executor_pool.h"

namespace kvexec {

ManualExecutorPool::ManualExecutorPool() : scheduler_(std::make_unique<manual::Scheduler>()) {}

ManualExecutorPool::~ManualExecutorPool() = default;

std::size_t ManualExecutorPool::runReady(TaskType type) {
    return scheduler_->runDue(type);
}
TaskId ManualExecutorPool::runNext(TaskType type) {
    return scheduler_->runEarliest(type);
}

void ManualExecutorPool::registerTaskable(Taskable& t) {
    scheduler_->registerTaskable(t);
}
void ManualExecutorPool::unregisterTaskable(Taskable& t, bool force) {
    scheduler_->unregisterTaskable(t, force);
}
std::size_t ManualExecutorPool::taskableCount() const {
    return scheduler_->taskableCount();
}
TaskId ManualExecutorPool::schedule(TaskPtr task) {
    return scheduler_->schedule(std::move(task));
}
bool ManualExecutorPool::cancel(TaskId id, bool remove) {
    return scheduler_->cancel(id, remove);
}
void ManualExecutorPool::wake(TaskId id) {
    scheduler_->wake(id);
}
bool ManualExecutorPool::wakeAndWait(TaskId id) {
    return scheduler_->wake(id);
}
void ManualExecutorPool::snooze(TaskId id, Clock::duration d) {
    scheduler_->snooze(id, d);
}
bool ManualExecutorPool::snoozeAndWait(TaskId id, Clock::duration d) {
    return scheduler_->snooze(id, d);
}
PoolStats ManualExecutorPool::stats() const {
    return scheduler_->stats();
}

}  // namespace kvexec
