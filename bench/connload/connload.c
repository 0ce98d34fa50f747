// connload: TCP connections at a fixed rate, for the watcher benchmark (bench/watch_evidence.py).
//
//   connload serve ADDR PORT BYTES          accept, send BYTES, close; forever (one thread, blocking)
//   connload load ADDR PORT RATE SECONDS    open RATE connections per second for SECONDS, read each
//                                           response to EOF, close; prints one JSON line of counts
//
// The client is one thread on epoll with non-blocking connects, started on a 1 ms tick so the
// rate holds without bursts of a second's worth; Python cannot open 10 000 connections/s.
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static int serve(const char *addr, int port, int bytes)
{
    // WORKERS processes on one port (SO_REUSEPORT): one accept loop cannot take 10 000/s on a
    // loaded machine.
    enum { WORKERS = 4 };
    for (int w = 1; w < WORKERS; w++)
        if (fork() == 0)
            break;
    int s = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    setsockopt(s, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
    inet_pton(AF_INET, addr, &a.sin_addr);
    if (bind(s, (void *)&a, sizeof(a)) || listen(s, 4096)) {
        perror("connload serve: bind/listen");
        return 1;
    }
    char *buf = calloc(1, bytes > 0 ? bytes : 1);
    printf("listening\n"); // once per worker
    fflush(stdout);
    for (;;) {
        int c = accept(s, NULL, NULL);
        if (c < 0)
            continue;
        ssize_t off = 0;
        while (off < bytes) {
            ssize_t n = write(c, buf + off, bytes - off);
            if (n <= 0)
                break;
            off += n;
        }
        close(c);
    }
}

static int load(const char *addr, int port, double rate, double seconds)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
    inet_pton(AF_INET, addr, &a.sin_addr);
    int ep = epoll_create1(0);
    long started = 0, done = 0, failed = 0, bytes = 0, open_now = 0, no_socket = 0, refused = 0, reset = 0;
    long total = (long)(rate * seconds);
    char buf[65536];
    double t0 = now(), end_wait = t0 + seconds + 10.0;
    struct epoll_event evs[256];
    while ((started < total || open_now > 0) && now() < end_wait) {
        long due = (long)((now() - t0) * rate);
        if (due > total)
            due = total;
        while (started < due) {
            int c = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
            started++;
            if (c < 0) {
                failed++;
                no_socket++;
                continue;
            }
            if (connect(c, (void *)&a, sizeof(a)) < 0 && errno != EINPROGRESS) {
                failed++;
                close(c);
                continue;
            }
            struct epoll_event e = {.events = EPOLLIN | EPOLLRDHUP, .data.fd = c};
            epoll_ctl(ep, EPOLL_CTL_ADD, c, &e);
            open_now++;
        }
        int n = epoll_wait(ep, evs, 256, 1);
        for (int i = 0; i < n; i++) {
            int c = evs[i].data.fd;
            for (;;) {
                ssize_t r = read(c, buf, sizeof(buf));
                if (r > 0) {
                    bytes += r;
                    continue;
                }
                if (r < 0 && errno == EAGAIN)
                    break;
                if (r == 0) {
                    done++;
                } else {
                    failed++;
                    if (errno == ECONNREFUSED)
                        refused++;
                    else
                        reset++;
                }
                close(c); // also removes it from the epoll set
                open_now--;
                break;
            }
        }
    }
    printf("{\"started\": %ld, \"completed\": %ld, \"failed\": %ld, \"no_socket\": %ld, \"refused\": %ld, "
           "\"reset\": %ld, \"unfinished\": %ld, \"bytes\": %ld, \"seconds\": %.3f}\n",
           started, done, failed, no_socket, refused, reset, open_now, bytes, now() - t0);
    return 0;
}

int main(int argc, char **argv)
{
    // thousands of connections open at once: the soft limit of 1 024 descriptors is too few
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    if (argc == 5 && !strcmp(argv[1], "serve"))
        return serve(argv[2], atoi(argv[3]), atoi(argv[4]));
    if (argc == 6 && !strcmp(argv[1], "load"))
        return load(argv[2], atoi(argv[3]), atof(argv[4]), atof(argv[5]));
    fprintf(stderr, "usage: connload serve ADDR PORT BYTES | connload load ADDR PORT RATE SECONDS\n");
    return 2;
}
