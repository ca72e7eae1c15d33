/* Replays fuzzer inputs without libFuzzer (any compiler): each argument
 * is a file, or a directory whose files are each one input, passed to
 * LLVMFuzzerTestOneInput.  Lets every build run the committed seed
 * corpus and past crashers as a plain regression test. */
#include "../test_plain.h"

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static unsigned long replayed;

static int replay_file(const char *path) {
  size_t len;
  unsigned char *buf = tu_read_file(path, &len);
  if (!buf) {
    printf("FAIL: cannot read %s: %s\n", path, strerror(errno));
    return 1;
  }
  LLVMFuzzerTestOneInput(buf, len);
  free(buf);
  replayed++;
  return 0;
}

int main(int argc, char **argv) {
  int bad = 0;
  for (int i = 1; i < argc; i++) {
    struct stat st;
    if (stat(argv[i], &st) != 0) {
      printf("FAIL: no such input %s\n", argv[i]);
      bad = 1;
      continue;
    }
    if (!S_ISDIR(st.st_mode)) {
      bad |= replay_file(argv[i]);
      continue;
    }
    DIR *d = opendir(argv[i]);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
      char path[4096];
      if (e->d_name[0] == '.')
        continue;
      snprintf(path, sizeof path, "%s/%s", argv[i], e->d_name);
      bad |= replay_file(path);
    }
    if (d)
      closedir(d);
  }
  printf("replayed %lu inputs\n", replayed);
  return bad || replayed == 0;
}
