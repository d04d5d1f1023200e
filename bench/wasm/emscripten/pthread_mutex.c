// Emscripten's pthread_mutex_t as a peer in bench/wasm: seed 000's
// microbenchmark, the same critical section as the wasm and JS peers.
//
//   pthread_mutex.js ROUND_MS WORK WARMUP_MS N1 [N2 ...]
//
// After one untimed warm-up round with the largest N (so V8 has tiered the
// hot loop up before anything is timed), it runs one timed round per N, in
// the order given: N pthreads contend for one mutex, each for ROUND_MS
// milliseconds. Prints one JSON line: [{threads, counts, startMs, endMs,
// counter}, ...], times on one clock all threads share (in Node,
// emscripten_get_now is process.hrtime). Exits 1 if the counter guarded by
// the mutex does not equal the acquisitions the threads counted.
#include <emscripten.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define MAX_THREADS 64

// What the mutex guards, as in wasm/src/bench.rs: the lost-update counter,
// then the value seed 000's critical section works on.
static struct {
  uint64_t count;
  double value;
} guarded;
static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;

static struct {
  double round_ms;
  unsigned work;
  atomic_int armed;  // threads ready at the gate
  atomic_int gate;   // 0 closed, 1 open
} round_;

typedef struct {
  uint64_t count;
  double start_ms, end_ms;
} result_t;
static result_t results[MAX_THREADS];

static void critical_section(unsigned work) {
  // volatile: every iteration is a real add and multiply, as black_box in Rust.
  volatile double *v = &guarded.value;
  for (unsigned k = 0; k < work; k++) *v = (*v + 1.0) * 0.75;
  guarded.count++;
}

static void *contend(void *arg) {
  result_t *r = arg;
  atomic_fetch_add(&round_.armed, 1);
  while (!atomic_load(&round_.gate)) {
  }
  // The clock is a call out to JS (about 0.1 us): read it once per chunk,
  // doubling the chunk while a chunk takes under 0.25 ms, as worker.mjs does.
  uint64_t n = 0, chunk = 16;
  double now = emscripten_get_now();
  double deadline = now + round_.round_ms;
  r->start_ms = now;
  while (now < deadline) {
    for (uint64_t k = 0; k < chunk; k++) {
      pthread_mutex_lock(&mutex);
      critical_section(round_.work);
      pthread_mutex_unlock(&mutex);
    }
    n += chunk;
    double t = emscripten_get_now();
    if (t - now < 0.25) chunk *= 2;
    else if (t - now > 2 && chunk > 1) chunk /= 2;
    now = t;
  }
  r->count = n;
  r->end_ms = now;
  return NULL;
}

// One round with n threads; returns the counter's increase (checked by the caller).
static uint64_t run_round(int n, double ms, unsigned work) {
  pthread_t threads[MAX_THREADS];
  round_.round_ms = ms;
  round_.work = work;
  atomic_store(&round_.armed, 0);
  atomic_store(&round_.gate, 0);
  uint64_t before = guarded.count;
  for (int i = 0; i < n; i++) {
    if (pthread_create(&threads[i], NULL, contend, &results[i]) != 0) {
      fprintf(stderr, "pthread_mutex: pthread_create failed (PTHREAD_POOL_SIZE too small?)\n");
      exit(2);
    }
  }
  // Spin-wait for every thread to reach the gate: all start together.
  while (atomic_load(&round_.armed) < n) {
  }
  atomic_store(&round_.gate, 1);
  for (int i = 0; i < n; i++) pthread_join(threads[i], NULL);
  return guarded.count - before;
}

int main(int argc, char **argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: pthread_mutex.js ROUND_MS WORK WARMUP_MS N1 [N2 ...]\n");
    return 2;
  }
  double ms = atof(argv[1]);
  unsigned work = (unsigned)atoi(argv[2]);
  double warmup_ms = atof(argv[3]);
  int max_n = 1;
  for (int a = 4; a < argc; a++) {
    int n = atoi(argv[a]);
    if (n < 1 || n > MAX_THREADS) {
      fprintf(stderr, "pthread_mutex: thread count %d is not in 1..%d\n", n, MAX_THREADS);
      return 2;
    }
    if (n > max_n) max_n = n;
  }
  if (warmup_ms > 0) run_round(max_n, warmup_ms, work);

  printf("[");
  for (int a = 4; a < argc; a++) {
    int n = atoi(argv[a]);
    uint64_t counter = run_round(n, ms, work);
    uint64_t total = 0;
    for (int i = 0; i < n; i++) total += results[i].count;
    if (counter != total) {
      fprintf(stderr, "pthread_mutex: %d threads: counter is %llu, threads counted %llu acquisitions\n",
              n, (unsigned long long)counter, (unsigned long long)total);
      return 1;
    }
    printf("%s{\"threads\":%d,\"counter\":%llu,\"counts\":[", a > 4 ? "," : "", n, (unsigned long long)counter);
    for (int i = 0; i < n; i++) printf("%s%llu", i ? "," : "", (unsigned long long)results[i].count);
    printf("],\"startMs\":[");
    for (int i = 0; i < n; i++) printf("%s%.6f", i ? "," : "", results[i].start_ms);
    printf("],\"endMs\":[");
    for (int i = 0; i < n; i++) printf("%s%.6f", i ? "," : "", results[i].end_ms);
    printf("]}");
  }
  printf("]\n");
  return 0;
}
