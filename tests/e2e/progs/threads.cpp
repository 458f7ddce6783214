// SPDX-License-Identifier: BSD-3-Clause
// 8 pthread_create threads, 4 std::threads, and a mutex/condition-variable hand-off.
#include <pthread.h>

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>
#include <vector>

static std::atomic<long> n_work{0}, n_produce{0}, n_consume{0};
static long counter = 0;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

__attribute__((noinline)) void work(int n) {
  n_work++;
  for (int i = 0; i < n; ++i) {
    pthread_mutex_lock(&mu);
    ++counter;
    pthread_mutex_unlock(&mu);
  }
}

void* pthread_main(void* arg) {
  for (int i = 0; i < 3; ++i) work(static_cast<int>(reinterpret_cast<long>(arg)));
  return nullptr;
}

// Hand-off: the producer passes 50 items one at a time; each waits for the other.
static std::mutex hm;
static std::condition_variable hcv;
static int slot = -1;

__attribute__((noinline)) void produce(int v) {
  n_produce++;
  std::unique_lock<std::mutex> lk(hm);
  hcv.wait(lk, [] { return slot < 0; });
  slot = v;
  hcv.notify_all();
}

__attribute__((noinline)) int consume() {
  n_consume++;
  std::unique_lock<std::mutex> lk(hm);
  hcv.wait(lk, [] { return slot >= 0; });
  int v = slot;
  slot = -1;
  hcv.notify_all();
  return v;
}

int main() {
  pthread_t t[8];
  for (long i = 0; i < 8; ++i) pthread_create(&t[i], nullptr, pthread_main, reinterpret_cast<void*>(100 + i));
  for (auto& x : t) pthread_join(x, nullptr);

  std::vector<std::thread> v;
  long sum = 0;
  v.emplace_back([] { for (int i = 0; i < 50; ++i) produce(i); });
  v.emplace_back([&sum] { for (int i = 0; i < 50; ++i) sum += consume(); });
  v.emplace_back([] { work(10); });
  v.emplace_back([] { work(20); });
  for (auto& x : v) x.join();
  std::printf("counter %ld sum %ld\n", counter, sum);
  std::printf("PROF_EXPECT main 1\nPROF_EXPECT work %ld\nPROF_EXPECT produce %ld\nPROF_EXPECT consume %ld\n", n_work.load(),
              n_produce.load(), n_consume.load());
  return 0;
}
