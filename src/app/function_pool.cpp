#include "app/function_pool.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>

#include "util/log.hpp"

namespace crmd::app {

namespace {
// The nice value of the pool's threads (0 is the network and writer threads'), as the slow reads'.
constexpr int kFunctionNice = 10;
}  // namespace

void FunctionPool::Slot::Release() {
  if (pool_) pool_->Leave(app_id_);
  pool_ = nullptr;
}

FunctionPool::FunctionPool(Options options) : options_(options) {
  options_.threads = std::max(1, options_.threads);
  options_.per_app = std::max(1, options_.per_app);
  for (int i = 0; i < options_.threads; ++i) threads_.emplace_back([this] { Loop(); });
}

FunctionPool::~FunctionPool() { Stop(); }

void FunctionPool::Stop() {
  std::map<std::string, Lane, std::less<>> dropped;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    for (auto& [id, lane] : lanes_) dropped[id].waiting.swap(lane.waiting);
    turns_.clear();
  }
  ready_.notify_all();
  for (auto& t : threads_)
    if (t.joinable()) t.join();
  threads_.clear();
}

bool FunctionPool::Submit(const std::string& app_id, std::function<void()> run) {
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return false;
    Lane& lane = lanes_[app_id];
    if (lane.waiting.size() >= options_.waiting_per_app) return false;
    const bool first = lane.waiting.empty();
    lane.waiting.push_back(std::move(run));
    if (first) turns_.push_back(app_id);
  }
  ready_.notify_one();
  return true;
}

std::optional<FunctionPool::Slot> FunctionPool::TryEnter(const std::string& app_id) {
  std::lock_guard lock(mutex_);
  Lane& lane = lanes_[app_id];
  if (lane.running >= options_.per_app) return std::nullopt;
  ++lane.running;
  return Slot(this, app_id);
}

void FunctionPool::Leave(const std::string& app_id) {
  {
    std::lock_guard lock(mutex_);
    auto it = lanes_.find(app_id);
    if (it == lanes_.end()) return;
    --it->second.running;
    if (it->second.running == 0 && it->second.waiting.empty()) lanes_.erase(it);
  }
  ready_.notify_all();  // a waiting call of that application may now run
}

std::optional<std::pair<std::string, std::function<void()>>> FunctionPool::Next() {
  // Each application with waiting calls once, in turn order: the first with a free slot runs.
  for (std::size_t n = turns_.size(); n > 0; --n) {
    std::string app_id = std::move(turns_.front());
    turns_.pop_front();
    Lane& lane = lanes_[app_id];
    if (lane.waiting.empty()) continue;
    if (lane.running >= options_.per_app) {
      turns_.push_back(std::move(app_id));
      continue;
    }
    auto run = std::move(lane.waiting.front());
    lane.waiting.pop_front();
    ++lane.running;
    if (!lane.waiting.empty()) turns_.push_back(app_id);  // its next call waits for the others' turns
    return std::make_pair(std::move(app_id), std::move(run));
  }
  return std::nullopt;
}

void FunctionPool::Loop() {
  setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), kFunctionNice);
  std::unique_lock lock(mutex_);
  for (;;) {
    if (stopping_) return;
    auto next = Next();
    if (!next) {
      ready_.wait(lock);
      continue;
    }
    lock.unlock();
    {
      Slot slot(this, next->first);
      try {
        next->second();
      } catch (const std::exception& e) {
        log::Error("a function call failed", {{"app", next->first}, {"error", e.what()}});
      }
    }
    lock.lock();
  }
}

int FunctionPool::running(const std::string& app_id) {
  std::lock_guard lock(mutex_);
  auto it = lanes_.find(app_id);
  return it == lanes_.end() ? 0 : it->second.running;
}

std::size_t FunctionPool::waiting(const std::string& app_id) {
  std::lock_guard lock(mutex_);
  auto it = lanes_.find(app_id);
  return it == lanes_.end() ? 0 : it->second.waiting.size();
}

}  // namespace crmd::app
