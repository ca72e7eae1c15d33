// The peer of the CPU scan's target: Boost.Compute's inclusive_scan on
// the same OpenCL device and n as clreduce's scan, beside the host's own
// yardsticks (a one-thread loop and a memcpy of the same bytes by two
// threads).  Wall clock of each call after a warm-up, median of R runs;
// GB/s count the read and the write (2 x n x 4 bytes).  Not part of the
// library: built only where Boost's headers and a C++ compiler are found.
//   boost-scan-peer [n (default 1e8)] [R (default 9)]
#include <boost/compute/algorithm/copy.hpp>
#include <boost/compute/algorithm/inclusive_scan.hpp>
#include <boost/compute/container/vector.hpp>
#include <boost/compute/core.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace compute = boost::compute;

template <class F> static double median_ms(unsigned r, F f) {
  std::vector<double> t;
  f(); // warm-up (and program build)
  for (unsigned i = 0; i < r; i++) {
    auto a = std::chrono::steady_clock::now();
    f();
    auto b = std::chrono::steady_clock::now();
    t.push_back(std::chrono::duration<double, std::milli>(b - a).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

static void line(const char *what, double ms, double bytes) {
  std::printf("%-52s %9.2f ms %8.2f GB/s\n", what, ms, bytes / ms / 1e6);
}

template <class T>
static int scan_of(compute::command_queue &q, size_t n, unsigned r,
                   const char *name) {
  std::vector<T> host(n);
  for (size_t i = 0; i < n; i++)
    host[i] = (T)((int)(i % 7) - 3); // partial sums stay small: exact
  compute::vector<T> in(n, q.get_context()), out(n, q.get_context());
  compute::copy(host.begin(), host.end(), in.begin(), q);
  double ms = median_ms(r, [&] {
    compute::inclusive_scan(in.begin(), in.end(), out.begin(), q);
    q.finish();
  });
  std::vector<T> back(n);
  compute::copy(out.begin(), out.end(), back.begin(), q);
  T run = 0;
  for (size_t i = 0; i < n; i++) {
    run += host[i];
    if (back[i] != run) {
      std::fprintf(stderr, "boost inclusive_scan %s wrong at %zu\n", name, i);
      return 1;
    }
  }
  char what[96];
  std::snprintf(what, sizeof what, "Boost.Compute inclusive_scan, %s", name);
  line(what, ms, 2.0 * n * sizeof(T));
  return 0;
}

int main(int argc, char **argv) {
  size_t n = argc > 1 ? (size_t)std::strtod(argv[1], nullptr) : 100000000;
  unsigned r = argc > 2 ? (unsigned)std::atoi(argv[2]) : 9;
  compute::device dev = compute::system::default_device();
  compute::context ctx(dev);
  compute::command_queue q(ctx, dev);
  std::printf("device: %s (%s), n = %zu, median of %u\n", dev.name().c_str(),
              dev.platform().name().c_str(), n, r);
  int bad = scan_of<int>(q, n, r, "int") | scan_of<float>(q, n, r, "float");
  std::vector<int> a(n, 1), b(n);
  double loop = median_ms(r, [&] {
    int run = 0;
    for (size_t i = 0; i < n; i++)
      b[i] = run += a[i];
  });
  line("one-thread C++ loop, int", loop, 2.0 * n * 4);
  double copy2 = median_ms(r, [&] {
    size_t h = n / 2;
    std::thread t([&] { std::memcpy(b.data(), a.data(), h * 4); });
    std::memcpy(b.data() + h, a.data() + h, (n - h) * 4);
    t.join();
  });
  line("memcpy by two threads (read + write)", copy2, 2.0 * n * 4);
  return bad;
}
