/*
 * The pod sandbox's process (what registry.k8s.io/pause is), for nodes that cannot pull that image:
 * it holds the pod's namespaces open, reaps the zombies of the pod's other processes (it is pid 1 of
 * the pod when the pod shares its process namespace), and exits at once on TERM or INT.
 * Built by scripts/cluster/node-images.sh with `gcc -Os -static`.
 */
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void stop(int signal) { _exit(signal == SIGTERM || signal == SIGINT ? 0 : 1); }

static void reap(int signal) {
  (void)signal;
  while (waitpid(-1, NULL, WNOHANG) > 0) {
  }
}

int main(void) {
  struct sigaction on_stop = {.sa_handler = stop}, on_child = {.sa_handler = reap, .sa_flags = SA_NOCLDSTOP};
  sigaction(SIGTERM, &on_stop, NULL);
  sigaction(SIGINT, &on_stop, NULL);
  sigaction(SIGCHLD, &on_child, NULL);
  for (;;) pause();
}
