// simdjson-validate: how fast simdjson, the state-of-the-art C++ JSON
// parser, validates the lines of an NDJSON file on this machine. It is the
// ceiling spate's full-validation queries are measured against (see
// README.md here): spate validates every line it parses, as simdjson's dom
// parser does.
//
// usage: simdjson-validate MODE FILE [START END]
//   MODE  dom       validate every line, count lines per top-level "service"
//                   string (as `* | stats by (service) count()` does)
//         dom-path  validate every line, sum the top-level "bytes" number per
//                   top-level "path" string in an absl::flat_hash_map and keep
//                   the ten largest sums (as `* | stats by (path) sum(bytes) s |
//                   sort by (s desc) | limit 10` does); each process keeps its
//                   own map, so two processes do not merge their groups
//         validate  validate every line, nothing else
//         ondemand  simdjson's lazy parser: find "service" without
//                   validating what it skips (an upper bound, not a peer)
//         memchr    only find the line ends (touches every byte)
//   START END       a byte range; each end moves forward to the next line
//                   start, so [0,N/2) and [N/2,N) split the lines exactly
//   env POPULATE=1  map with MAP_POPULATE, outside the timed part
//
// build: g++ -O3 -march=native -o simdjson-validate simdjson-validate.cpp \
//          -lsimdjson -labsl_hash -labsl_city -labsl_low_level_hash -labsl_raw_hash_set
#include <absl/container/flat_hash_map.h>
#include <simdjson.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>
#include <algorithm>

using namespace simdjson;
#define STRINGIFY2(x) #x
#define STRINGIFY(x) STRINGIFY2(x)

static size_t snap(const char *d, size_t n, size_t p) {
  if (p == 0) return 0;
  if (p >= n) return n;
  if (d[p - 1] == '\n') return p;
  const void *nl = memchr(d + p, '\n', n - p);
  return nl ? (size_t)((const char *)nl - d) + 1 : n;
}

struct Counts {
  // keys are owned by `store`; lookups with views into the parser's buffers
  std::unordered_map<std::string_view, uint64_t> m;
  std::deque<std::string> store;
  void add(std::string_view k) {
    auto it = m.find(k);
    if (it != m.end()) { it->second++; return; }
    store.emplace_back(k);
    m.emplace(std::string_view(store.back()), 1);
  }
};

// Sums is dom-path's table: per path, the sum of "bytes" and the line count.
// Keys are std::strings (short ones inline); a hit looks up a view of the
// parser's buffer without copying it.
struct Sums {
  struct Agg { double sum = 0; uint64_t n = 0; };
  absl::flat_hash_map<std::string, Agg> m;
  void add(std::string_view k, double v) {
    auto it = m.find(absl::string_view(k.data(), k.size()));
    if (it == m.end()) it = m.emplace(std::string(k), Agg{}).first;
    it->second.sum += v;
    it->second.n++;
  }
};

int main(int argc, char **argv) {
  if (argc < 3) { fprintf(stderr, "usage: %s dom|dom-path|validate|ondemand|memchr FILE [START END]\n", argv[0]); return 2; }
  std::string mode = argv[1];
  int fd = open(argv[2], O_RDONLY);
  if (fd < 0) { perror("open"); return 1; }
  struct stat st; fstat(fd, &st);
  size_t n = st.st_size;
  bool populate = getenv("POPULATE") && atoi(getenv("POPULATE"));

  auto t0 = std::chrono::steady_clock::now();
  int flags = MAP_PRIVATE | (populate ? MAP_POPULATE : 0);
  const char *d = (const char *)mmap(nullptr, n, PROT_READ, flags, fd, 0);
  if (d == MAP_FAILED) { perror("mmap"); return 1; }
  madvise((void *)d, n, MADV_SEQUENTIAL);
  if (populate) t0 = std::chrono::steady_clock::now();  // exclude prefault

  size_t start = 0, end = n;
  if (argc >= 5) { start = snap(d, n, strtoull(argv[3], 0, 10)); end = snap(d, n, strtoull(argv[4], 0, 10)); }

  uint64_t lines = 0, valid = 0;
  Counts counts;
  Sums sums;
  dom::parser dp;
  ondemand::parser op;
  // pre-allocate so the parsers never reallocate inside the loop
  if (dp.allocate(1 << 20) != SUCCESS || op.allocate(1 << 20) != SUCCESS) { fprintf(stderr, "alloc failed\n"); return 1; }
  std::vector<char> tailbuf;  // padded copy for lines too close to the end of the mapping

  int m = mode == "dom" ? 0 : mode == "validate" ? 1 : mode == "ondemand" ? 2 : mode == "memchr" ? 3 : mode == "dom-path" ? 4 : -1;
  if (m < 0) { fprintf(stderr, "bad mode\n"); return 2; }

  size_t p = start;
  while (p < end) {
    const char *ls = d + p;
    const char *nl = (const char *)memchr(ls, '\n', end - p);
    size_t len = nl ? (size_t)(nl - ls) : end - p;  // unterminated final line also handled
    p += len + 1;
    lines++;
    if (m == 3) continue;
    const char *buf = ls;
    if ((size_t)(ls - d) + len + SIMDJSON_PADDING > n) {  // not enough readable bytes after the line
      tailbuf.assign(len + SIMDJSON_PADDING, ' ');
      memcpy(tailbuf.data(), ls, len);
      buf = tailbuf.data();
    }
    if (m == 0 || m == 1 || m == 4) {
      dom::element doc;
      if (dp.parse(buf, len, false).get(doc) != SUCCESS) continue;
      valid++;
      if (m == 4) {
        dom::object obj;
        if (doc.get_object().get(obj) != SUCCESS) continue;
        std::string_view path;
        if (obj.at_key("path").get_string().get(path) != SUCCESS) path = "";
        dom::element b;
        double v = 0;
        if (obj.at_key("bytes").get(b) == SUCCESS) {
          int64_t i;
          if (b.get_int64().get(i) == SUCCESS) v = double(i);
          else if (b.get_double().get(v) != SUCCESS) v = 0;
        }
        sums.add(path, v);
      } else if (m == 0) {
        dom::object obj;
        if (doc.get_object().get(obj) != SUCCESS) continue;
        std::string_view svc;
        if (obj.at_key("service").get_string().get(svc) != SUCCESS) continue;
        counts.add(svc);
      }
    } else {
      ondemand::document doc;
      if (op.iterate(buf, len, len + SIMDJSON_PADDING).get(doc) != SUCCESS) continue;
      ondemand::object obj;
      if (doc.get_object().get(obj) != SUCCESS) continue;
      std::string_view svc;
      auto err = obj["service"].get_string().get(svc);
      if (err == SUCCESS) { valid++; counts.add(svc); }
      else if (err == NO_SUCH_FIELD) valid++;
    }
  }
  auto t1 = std::chrono::steady_clock::now();
  double secs = std::chrono::duration<double>(t1 - t0).count();
  size_t bytes = end - start;
  printf("impl=%s simdjson=%s mode=%s range=[%zu,%zu) bytes=%zu lines=%llu valid=%llu secs=%.4f GB/s=%.3f%s\n",
         get_active_implementation()->name().c_str(), STRINGIFY(SIMDJSON_VERSION), mode.c_str(), start, end, bytes,
         (unsigned long long)lines, (unsigned long long)valid, secs, bytes / secs / 1e9,
         populate ? " (prefaulted)" : "");
  if (m == 4) {
    // The ten largest sums, as the query's sort and limit keep them.
    std::vector<std::pair<double, std::string_view>> v;
    v.reserve(sums.m.size());
    for (auto &kv : sums.m) v.emplace_back(kv.second.sum, kv.first);
    size_t k = std::min<size_t>(10, v.size());
    std::partial_sort(v.begin(), v.begin() + k, v.end(), [](auto &a, auto &b) { return a.first > b.first; });
    printf("  groups=%zu\n", sums.m.size());
    for (size_t i = 0; i < k; i++) printf("  %-24.*s %.0f\n", (int)v[i].second.size(), v[i].second.data(), v[i].first);
  }
  if (m == 0 || m == 2) {
    std::vector<std::pair<std::string_view, uint64_t>> v(counts.m.begin(), counts.m.end());
    std::sort(v.begin(), v.end());
    uint64_t sum = 0;
    for (auto &kv : v) { printf("  %-24.*s %llu\n", (int)kv.first.size(), kv.first.data(), (unsigned long long)kv.second); sum += kv.second; }
    printf("  sum=%llu\n", (unsigned long long)sum);
  }
  return 0;
}
