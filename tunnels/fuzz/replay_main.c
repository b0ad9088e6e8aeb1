/*
 * replay_main.c: runs fuzz_tun_input over the files named on the command
 * line or found in the directories named there (the seed corpus), for
 * builds without libFuzzer.
 */
#include <dirent.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* REPLAY_MAX is the largest input replayed, bytes. */
#define REPLAY_MAX 65536
/* REPLAY_PATH is the longest path built, bytes. */
#define REPLAY_PATH 4096

static int replay_file(const char *path) {
  static uint8_t buf[REPLAY_MAX];
  FILE *f = fopen(path, "rb");
  size_t n;

  if (f == NULL) {
    return 0;
  }
  n = fread(buf, 1, sizeof(buf), f);
  fclose(f);
  LLVMFuzzerTestOneInput(buf, n);
  return 1;
}

int main(int argc, char **argv) {
  int i, count = 0;

  for (i = 1; i < argc; ++i) {
    DIR *d = opendir(argv[i]);
    struct dirent *e;

    if (d == NULL) {
      count += replay_file(argv[i]);
      continue;
    }
    while ((e = readdir(d)) != NULL) {
      char path[REPLAY_PATH];

      if (e->d_name[0] == '.') {
        continue;
      }
      snprintf(path, sizeof(path), "%s/%s", argv[i], e->d_name);
      count += replay_file(path);
    }
    closedir(d);
  }
  printf("replayed %d inputs\n", count);
  return count > 0 ? 0 : 1;
}
