/*
 * replay_main.c: feeds files through LLVMFuzzerTestOneInput without
 * libFuzzer, so ordinary (gcc) builds replay a fuzz corpus as a ctest.
 *
 * Usage: <binary> PATH...   where each PATH is a file or a directory whose
 * regular files are all replayed. Exits 0 after at least one input, 1 on
 * an unreadable path or when nothing was replayed.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* REPLAY_MAX_INPUT is the largest input replayed, as libFuzzer's
   -max_len would cap it; DNS messages are at most 65535 bytes. */
#define REPLAY_MAX_INPUT 65536
/* REPLAY_PATH_LEN is the longest path handled. */
#define REPLAY_PATH_LEN 4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint8_t replay_buf[REPLAY_MAX_INPUT];

/* replay_file runs one file; returns 0 or -1 if it cannot be read. */
static int replay_file(const char *path) {
  FILE *f = fopen(path, "rb");
  size_t n;
  uint8_t *copy;
  if (f == NULL) {
    fprintf(stderr, "replay: cannot open %s\n", path);
    return -1;
  }
  n = fread(replay_buf, 1, sizeof(replay_buf), f);
  fclose(f);
  /* An exact-size heap copy lets ASan see any read past the input. */
  copy = malloc(n > 0 ? n : 1);
  if (copy == NULL) {
    return -1;
  }
  memcpy(copy, replay_buf, n);
  LLVMFuzzerTestOneInput(copy, n);
  free(copy);
  return 0;
}

int main(int argc, char **argv) {
  int i;
  size_t count = 0;
  int rv = 0;
  for (i = 1; i < argc; i++) {
    struct stat st;
    if (stat(argv[i], &st) != 0) {
      fprintf(stderr, "replay: cannot stat %s\n", argv[i]);
      rv = 1;
      continue;
    }
    if (S_ISDIR(st.st_mode)) {
      DIR *d = opendir(argv[i]);
      struct dirent *e;
      if (d == NULL) {
        rv = 1;
        continue;
      }
      while ((e = readdir(d)) != NULL) {
        char path[REPLAY_PATH_LEN];
        struct stat fst;
        snprintf(path, sizeof(path), "%s/%s", argv[i], e->d_name);
        if (stat(path, &fst) != 0 || !S_ISREG(fst.st_mode)) {
          continue;
        }
        if (replay_file(path) != 0) {
          rv = 1;
        }
        count++;
      }
      closedir(d);
    } else if (replay_file(argv[i]) != 0) {
      rv = 1;
    } else {
      count++;
    }
  }
  printf("replayed %zu inputs\n", count);
  return rv != 0 || count == 0;
}
