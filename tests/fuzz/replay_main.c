/* replay_main.c: runs fuzz_lesson.c's entry point over files and folders,
 * each input once, without libFuzzer. CTest uses it to replay the committed
 * corpus and the regression inputs with gcc, under the sanitizers and not.
 *
 *     fuzz_lesson_replay tests/fuzz/corpus tests/fuzz/regressions
 *
 * Exit status: 0 when every input ran (the harness aborts on a broken
 * contract), 1 when an input could not be read or nothing was found.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return -1;
    }
    size_t cap = 1 << 16, len = 0;
    unsigned char *buf = malloc(cap); /* (cap) the whole file */
    for (;;) {
        if (!buf) {
            fclose(f);
            fprintf(stderr, "%s: out of memory\n", path);
            return -1;
        }
        len += fread(buf + len, 1, cap - len, f);
        if (len < cap) break;
        unsigned char *bigger = realloc(buf, cap * 2);
        if (!bigger) free(buf);
        buf = bigger;
        cap *= 2;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        fprintf(stderr, "%s: read error\n", path);
        free(buf);
        return -1;
    }
    /* an exact-size copy, so ASan sees a read past the input's end */
    unsigned char *exact = malloc(len ? len : 1);
    if (!exact) {
        free(buf);
        return -1;
    }
    memcpy(exact, buf, len);
    free(buf);
    LLVMFuzzerTestOneInput(exact, len);
    free(exact);
    return 0;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Runs every regular file of a folder (not recursive), in name order. */
static int run_dir(const char *dir, int *count)
{
    DIR *d = opendir(dir);
    if (!d) {
        perror(dir);
        return -1;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            char **more = realloc(names, cap * sizeof *names);
            if (!more) break;
            names = more;
        }
        size_t len = strlen(dir) + strlen(e->d_name) + 2;
        names[n] = malloc(len);
        if (!names[n]) break;
        snprintf(names[n], len, "%s/%s", dir, e->d_name);
        n++;
    }
    closedir(d);
    qsort(names, n, sizeof *names, cmp_names);
    int st = 0;
    for (size_t i = 0; i < n; i++) {
        struct stat sb;
        if (stat(names[i], &sb) == 0 && S_ISREG(sb.st_mode)) {
            if (run_file(names[i]) != 0) st = -1;
            (*count)++;
        }
        free(names[i]);
    }
    free(names);
    return st;
}

int main(int argc, char **argv)
{
    int count = 0, st = 0;
    for (int i = 1; i < argc; i++) {
        struct stat sb;
        if (stat(argv[i], &sb) != 0) {
            perror(argv[i]);
            st = 1;
        } else if (S_ISDIR(sb.st_mode)) {
            if (run_dir(argv[i], &count) != 0) st = 1;
        } else {
            if (run_file(argv[i]) != 0) st = 1;
            count++;
        }
    }
    if (count == 0) {
        fprintf(stderr, "fuzz_lesson_replay: no inputs\n");
        return 1;
    }
    printf("replayed %d inputs\n", count);
    return st;
}
