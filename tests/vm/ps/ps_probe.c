/* A plain C OpenMP program for ccnuma-ps's guest test (issue 33): no ccnuma code, built with GCC
 * (libgomp) and with clang (libomp). It lays out one large array the way its MODE says, writes
 * its own ground truth as JSON (each region's pages per node by move_pages, its pages that share
 * one frame by /proc/self/pagemap, and each thread's TID, allowed CPUs and sched_getcpu), and then
 * waits, every thread blocked, until it is killed or --timeout passes, so that another process
 * can observe it. The truth file appears by rename, complete: its existence is the ready signal.
 *
 *   ps_probe MODE TRUTH [--mib N] [--timeout S]
 *     serial      thread 0 writes the array
 *     parallel    the team writes it, schedule(static)
 *     calloc      calloc'ed and only read: every page the shared zero page
 *     interleave  mmap'ed, mbind(MPOL_INTERLEAVE) over the online nodes, then written serially
 *   ps_probe balance TRUTH --init-cpu A --run-cpu B [--mib N] [--seconds S]
 *     one thread writes the array on CPU A, then sweeps it (a 1-D Jacobi step in place) on CPU B
 *     for S seconds; TRUTH gets the pages per node once a second, and the process exits.
 *
 * Waiting threads are blocked in pause(), not spinning: a blocked thread keeps the CPU it last
 * ran on, which is what /proc shows another process; a spinning one may be moved at any time. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <omp.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 256
#define MAX_NODES 64
#define PARTS 20
#define MPOL_INTERLEAVE_MODE 3 /* <linux/mempolicy.h>'s MPOL_INTERLEAVE */

static void die(const char* what) {
    fprintf(stderr, "ps_probe: %s: %s\n", what, strerror(errno));
    exit(1);
}

static void usage(const char* why) {
    fprintf(stderr, "ps_probe: %s (usage: ps_probe serial|parallel|calloc|interleave|balance TRUTH [--mib N] "
                    "[--timeout S] [--init-cpu A --run-cpu B --seconds S])\n", why);
    exit(2);
}

static long page_size;

struct region {
    const char* name;
    uintptr_t start, end; /* page-aligned */
    long pages[MAX_NODES];
    long absent;      /* move_pages: no page (never touched) or the zero page */
    long zero_pages;  /* present pages whose frame another page of the region shares; -1: PFNs hidden */
    long huge_pages;  /* present pages whose frame /proc/kpageflags marks THP or HUGE; -1: unreadable */
    int max_node;
    char policy[64];  /* what the program asked for, as numa_maps writes it */
    int parts[PARTS]; /* per 5%: the node of >= 90% of its present pages; -1 most not present; -2 mixed */
};

/* move_pages(0, ..., NULL, status): the node of every page, as the kernel says. */
static void count_pages(struct region* r) {
    const long n = (long)((r->end - r->start) / (uintptr_t)page_size);
    void** pages = malloc(sizeof(void*) * (size_t)n);
    int* status = malloc(sizeof(int) * (size_t)n);
    if (!pages || !status) die("malloc");
    for (long i = 0; i < n; ++i) pages[i] = (void*)(r->start + (uintptr_t)(i * page_size));
    if (syscall(SYS_move_pages, 0, (unsigned long)n, pages, NULL, status, 0) != 0) die("move_pages");
    memset(r->pages, 0, sizeof r->pages);
    r->absent = 0;
    r->max_node = -1;
    for (long i = 0; i < n; ++i) {
        if (status[i] >= 0 && status[i] < MAX_NODES) {
            ++r->pages[status[i]];
            if (status[i] > r->max_node) r->max_node = status[i];
        } else {
            ++r->absent;
        }
    }
    for (int p = 0; p < PARTS; ++p) {
        long per_node[MAX_NODES] = {0}, present = 0;
        for (long i = n * p / PARTS; i < n * (p + 1) / PARTS; ++i)
            if (status[i] >= 0 && status[i] < MAX_NODES) ++per_node[status[i]], ++present;
        /* ccnuma-ps's rule (layout_span): not present where most pages have no frame. */
        const long size = n * (p + 1) / PARTS - n * p / PARTS;
        r->parts[p] = 2 * present < size ? -1 : -2;
        for (int node = 0; node < MAX_NODES && 2 * present >= size; ++node)
            if (10 * per_node[node] >= 9 * present) r->parts[p] = node;
    }
    free(pages);
    free(status);
}

static int cmp_u64(const void* a, const void* b) {
    const uint64_t x = *(const uint64_t*)a, y = *(const uint64_t*)b;
    return x < y ? -1 : x > y;
}

/* Pages of a private anonymous region that share a frame: only the zero page is mapped at
 * several addresses of such a region. Needs PFNs in pagemap (CAP_SYS_ADMIN). */
static void count_zero_pages(struct region* r) {
    const long n = (long)((r->end - r->start) / (uintptr_t)page_size);
    uint64_t* entries = malloc(sizeof(uint64_t) * (size_t)n);
    uint64_t* pfns = malloc(sizeof(uint64_t) * (size_t)n);
    if (!entries || !pfns) die("malloc");
    FILE* f = fopen("/proc/self/pagemap", "rb");
    if (!f) die("open /proc/self/pagemap");
    if (fseek(f, (long)(r->start / (uintptr_t)page_size * sizeof(uint64_t)), SEEK_SET) != 0) die("seek pagemap");
    if (fread(entries, sizeof(uint64_t), (size_t)n, f) != (size_t)n) die("read pagemap");
    fclose(f);
    long present = 0, hidden = 0;
    for (long i = 0; i < n; ++i) {
        if (!(entries[i] >> 63)) continue;
        const uint64_t pfn = entries[i] & ((UINT64_C(1) << 55) - 1);
        if (pfn == 0) ++hidden;
        pfns[present++] = pfn;
    }
    if (present > 0 && hidden == present) {
        r->zero_pages = -1;
    } else {
        qsort(pfns, (size_t)present, sizeof(uint64_t), cmp_u64);
        long shared = 0;
        for (long i = 0; i < present;) {
            long j = i;
            while (j < present && pfns[j] == pfns[i]) ++j;
            if (j - i > 1) shared += j - i;
            i = j;
        }
        r->zero_pages = shared;
    }
    /* /proc/kpageflags: bit 17 HUGE (hugetlb, or the head of a compound page), 22 THP. */
    r->huge_pages = -1;
    FILE* flags = fopen("/proc/kpageflags", "rb");
    if (flags && hidden == 0) {
        r->huge_pages = 0;
        for (long i = 0; i < n; ++i) {
            if (!(entries[i] >> 63)) continue;
            uint64_t f = 0;
            const uint64_t pfn = entries[i] & ((UINT64_C(1) << 55) - 1);
            if (fseek(flags, (long)(pfn * sizeof f), SEEK_SET) != 0 || fread(&f, sizeof f, 1, flags) != 1) {
                r->huge_pages = -1;
                break;
            }
            if (f & ((UINT64_C(1) << 17) | (UINT64_C(1) << 22))) ++r->huge_pages;
        }
    }
    if (flags) fclose(flags);
    free(entries);
    free(pfns);
}

static void print_region(FILE* out, const struct region* r) {
    fprintf(out, "{\"name\":\"%s\",\"start\":%lu,\"end\":%lu,\"pages\":{", r->name, (unsigned long)r->start,
            (unsigned long)r->end);
    int first = 1;
    for (int node = 0; node <= r->max_node; ++node) {
        if (!r->pages[node]) continue;
        fprintf(out, "%s\"%d\":%ld", first ? "" : ",", node, r->pages[node]);
        first = 0;
    }
    fprintf(out, "},\"absent\":%ld,\"zero_pages\":%ld,\"huge_pages\":%ld,\"policy\":\"%s\",\"parts\":[", r->absent,
            r->zero_pages, r->huge_pages, r->policy[0] ? r->policy : "default");
    for (int p = 0; p < PARTS; ++p) fprintf(out, "%s%d", p ? "," : "", r->parts[p]);
    fprintf(out, "]}");
}

struct thread_truth {
    long tid;
    int cpu;
    char allowed[1024];
};

static struct thread_truth threads[MAX_THREADS];

static void list_allowed(char* out, size_t size) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) die("sched_getaffinity");
    size_t used = 0;
    out[0] = '\0';
    for (int c = 0; c < CPU_SETSIZE && used + 16 < size; ++c)
        if (CPU_ISSET(c, &set)) used += (size_t)snprintf(out + used, size - used, "%s%d", used ? "," : "", c);
}

/* Writes TRUTH.tmp; the caller renames it to TRUTH, so a reader sees all of it or nothing. */
static void write_truth(const char* tmp, const char* mode, const struct region* r, int nthreads) {
    FILE* out = fopen(tmp, "w");
    if (!out) die("open the truth file");
    fprintf(out, "{\"pid\":%ld,\"mode\":\"%s\",\"page_size\":%ld,\"threads\":[", (long)getpid(), mode, page_size);
    for (int t = 0; t < nthreads; ++t)
        fprintf(out, "%s{\"tid\":%ld,\"cpu\":%d,\"allowed\":[%s]}", t ? "," : "", threads[t].tid, threads[t].cpu,
                threads[t].allowed);
    fprintf(out, "],\"regions\":[");
    print_region(out, r);
    fprintf(out, "]}\n");
    if (fclose(out) != 0) die("write the truth file");
}

static int online_nodes(unsigned long* mask) {
    FILE* f = fopen("/sys/devices/system/node/online", "r");
    if (!f) die("open /sys/devices/system/node/online");
    int count = 0, a, b;
    *mask = 0;
    while (fscanf(f, "%d", &a) == 1) {
        b = a;
        int c = fgetc(f);
        if (c == '-') {
            if (fscanf(f, "%d", &b) != 1) break;
            c = fgetc(f);
        }
        for (int node = a; node <= b && node < 64; ++node, ++count) *mask |= 1UL << node;
        if (c != ',') break;
    }
    fclose(f);
    return count;
}

/* "0-3", "0,2": a node mask as numa_maps writes it. */
static void format_mask(unsigned long mask, char* out, size_t size) {
    size_t used = 0;
    out[0] = '\0';
    for (int a = 0; a < 64 && used + 8 < size; ++a) {
        if (!(mask >> a & 1)) continue;
        int b = a;
        while (b + 1 < 64 && (mask >> (b + 1) & 1)) ++b;
        used += (size_t)(b > a ? snprintf(out + used, size - used, "%s%d-%d", used ? "," : "", a, b)
                               : snprintf(out + used, size - used, "%s%d", used ? "," : "", a));
        a = b;
    }
}

static int node_of_cpu(int cpu) {
    char path[128];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d", cpu);
    DIR* d = opendir(path);
    if (!d) die("open the CPU's sysfs directory");
    int node = -1;
    for (struct dirent* e; (e = readdir(d));)
        if (strncmp(e->d_name, "node", 4) == 0 && e->d_name[4] >= '0' && e->d_name[4] <= '9') node = atoi(e->d_name + 4);
    closedir(d);
    return node;
}

static void pin(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) die("sched_setaffinity");
}

/* Each thread of an unbound team is pinned to the t-th CPU of its mask in the team's first region,
 * before anything is written, and stays there. Unpinned, the program's truth was the scheduler's
 * choice, and ccnuma-ps's verdicts rightly followed it: the team once blocked with all four
 * threads last on one CPU, so no serial first-touch verdict (fresh-root CI at e978480); under
 * load, thread 0 moved between nodes while it wrote the serial array (81% on one node, no
 * verdict) and the parallel write's threads moved mid-part. Pinned for a moment and given the
 * whole mask back, threads moved between recording their CPU and blocking (3 runs of 3). A
 * thread already bound to one CPU (ccnuma-run --bind) is left as it is. */
static void pin_own_cpu(int t) {
    cpu_set_t mask;
    if (sched_getaffinity(0, sizeof mask, &mask) != 0) die("sched_getaffinity");
    const int count = CPU_COUNT(&mask);
    if (count < 2) return;
    for (int c = 0, seen = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &mask) && seen++ == t % count) {
            pin(c);
            return;
        }
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* NUMA balancing's case: written on one CPU's node, used from another's. */
static int balance(const char* truth, size_t bytes, int init_cpu, int run_cpu, double seconds) {
    pin(init_cpu);
    const size_t n = bytes / sizeof(double);
    double* a = malloc(bytes);
    if (!a) die("malloc");
    for (size_t i = 0; i < n; ++i) a[i] = (double)(i % 7);
    struct region r = {.name = "array"};
    r.start = (uintptr_t)a & ~(uintptr_t)(page_size - 1);
    r.end = ((uintptr_t)(a + n) + (uintptr_t)page_size - 1) & ~(uintptr_t)(page_size - 1);
    pin(run_cpu);
    const int init_node = node_of_cpu(init_cpu);
    r.zero_pages = r.huge_pages = -1; /* not measured here */
    const int run_node = node_of_cpu(run_cpu);
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", truth);
    FILE* out = fopen(tmp, "w");
    if (!out) die("open the truth file");
    fprintf(out, "{\"pid\":%ld,\"mode\":\"balance\",\"page_size\":%ld,\"init_node\":%d,\"run_node\":%d,\"samples\":[",
            (long)getpid(), page_size, init_node, run_node);
    const double t0 = now();
    double next = t0, check = 0;
    int samples = 0, local_in_a_row = 0;
    /* Until --seconds, or 3 s after 99% of the pages are on the run node: the observer then has
     * its last samples with the pages home. (A page or two may stay: the allocator's header page
     * is also written where the array is not used.) The first sample is taken before the run
     * CPU touches the array, and the sweeps start 2.5 s later: no access, no hinting fault, so
     * nothing moves while an observer sampling every second sees the serial init as it is. With
     * the sweeps right away, balancing (scanning every 100 ms) had moved 76% of the pages by the
     * first sample of a loaded run (1.2 s in, one sweep of 64 MiB under TCG). */
    int swept = 0;
    while (now() - t0 < seconds && local_in_a_row < 4) {
        if (swept) {
            for (size_t i = 1; i + 1 < n; ++i) a[i] = 0.5 * (a[i - 1] + a[i + 1]);
            check += a[n / 2];
        } else if (samples > 0) {
            const struct timespec pause = {2, 500000000};
            nanosleep(&pause, NULL);
            swept = 1;
        }
        if (now() >= next) {
            count_pages(&r);
            fprintf(out, "%s{\"elapsed_s\":%.3f,\"region\":", samples++ ? "," : "", now() - t0);
            print_region(out, &r);
            fputc('}', out);
            const long total = (long)((r.end - r.start) / (uintptr_t)page_size);
            local_in_a_row = run_node >= 0 && run_node <= r.max_node && 100 * r.pages[run_node] >= 99 * total
                                 ? local_in_a_row + 1
                                 : 0;
            next = now() + 1.0; /* a second apart, whatever the pause or a sweep took */
        }
    }
    fprintf(out, "],\"checksum\":%g}\n", check);
    if (fclose(out) != 0) die("write the truth file");
    if (rename(tmp, truth) != 0) die("rename the truth file");
    free(a);
    return 0;
}

int main(int argc, char** argv) {
    if (argc < 3) usage("give a mode and a truth file");
    const char* mode = argv[1];
    const char* truth = argv[2];
    long mib = 64, timeout = 120, init_cpu = -1, run_cpu = -1;
    double seconds = 30;
    for (int i = 3; i < argc; ++i) {
        if (i + 1 >= argc) usage("an option needs a value");
        char* end = NULL;
        const char* opt = argv[i];
        const char* value = argv[++i];
        errno = 0;
        const double v = strtod(value, &end);
        if (errno || *end || v < 0) usage("bad option value");
        if (!strcmp(opt, "--mib")) mib = (long)v;
        else if (!strcmp(opt, "--timeout")) timeout = (long)v;
        else if (!strcmp(opt, "--init-cpu")) init_cpu = (long)v;
        else if (!strcmp(opt, "--run-cpu")) run_cpu = (long)v;
        else if (!strcmp(opt, "--seconds")) seconds = v;
        else usage("unknown option");
    }
    if (mib <= 0) usage("--mib must be positive");
    page_size = sysconf(_SC_PAGESIZE);
    const size_t bytes = (size_t)mib << 20;
    if (!strcmp(mode, "balance")) {
        if (init_cpu < 0 || run_cpu < 0) usage("balance needs --init-cpu and --run-cpu");
        return balance(truth, bytes, (int)init_cpu, (int)run_cpu, seconds);
    }
    alarm((unsigned)timeout);  /* SIGALRM ends the process if nobody kills it */

    /* The team's threads exist before the array is mapped: a thread stack mapped next to the
     * array could otherwise merge with it into one mapping. */
    int nthreads = 0;
#pragma omp parallel
    {
        pin_own_cpu(omp_get_thread_num());  /* the runtime keeps these threads for the regions below */
#pragma omp single
        nthreads = omp_get_num_threads();
    }
    if (nthreads > MAX_THREADS) usage("too many threads");

    const size_t n = bytes / sizeof(double);
    double* a = NULL;
    volatile double sink = 0;
    char policy[64] = "";
    if (!strcmp(mode, "serial") || !strcmp(mode, "parallel")) {
        a = malloc(bytes);
        if (!a) die("malloc");
        if (!strcmp(mode, "serial")) {
            for (size_t i = 0; i < n; ++i) a[i] = (double)i;
        } else {
#pragma omp parallel for schedule(static)
            for (size_t i = 0; i < n; ++i) a[i] = (double)i;
        }
    } else if (!strcmp(mode, "calloc")) {
        a = calloc(n, sizeof(double));
        if (!a) die("calloc");
        double s = 0;
        for (size_t i = 0; i < n; i += (size_t)page_size / sizeof(double)) s += a[i];
        sink = s;
    } else if (!strcmp(mode, "interleave")) {
        a = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (a == MAP_FAILED) die("mmap");
        unsigned long mask;
        online_nodes(&mask);
        if (syscall(SYS_mbind, a, bytes, MPOL_INTERLEAVE_MODE, &mask, 8 * sizeof mask, 0) != 0) die("mbind");
        strcpy(policy, "interleave:");
        format_mask(mask, policy + strlen(policy), sizeof policy - strlen(policy));
        for (size_t i = 0; i < n; ++i) a[i] = (double)i;
    } else {
        usage("unknown mode");
    }
    (void)sink;

    struct region r = {.name = "array"};
    r.start = (uintptr_t)a & ~(uintptr_t)(page_size - 1);
    r.end = ((uintptr_t)(a + n) + (uintptr_t)page_size - 1) & ~(uintptr_t)(page_size - 1);
    strcpy(r.policy, policy);
    count_pages(&r);
    count_zero_pages(&r);

    /* Each thread records where it is and blocks; thread 0 waits for the others, writes the
     * truth and blocks too. The region never ends: SIGALRM or the observer's kill does. */
    atomic_int recorded = 0;
#pragma omp parallel num_threads(nthreads)
    {
        const int t = omp_get_thread_num();
        threads[t].tid = syscall(SYS_gettid);
        list_allowed(threads[t].allowed, sizeof threads[t].allowed);
        if (t != 0) {
            threads[t].cpu = sched_getcpu();
            atomic_fetch_add(&recorded, 1);
            for (;;) pause();
        }
        while (atomic_load(&recorded) < nthreads - 1) {
        }
        char tmp[4096];
        snprintf(tmp, sizeof tmp, "%s.tmp", truth);
        do {
            threads[0].cpu = sched_getcpu();
            write_truth(tmp, mode, &r, nthreads);
        } while (sched_getcpu() != threads[0].cpu);
        if (rename(tmp, truth) != 0) die("rename the truth file");
        for (;;) pause();
    }
    return 0;
}
