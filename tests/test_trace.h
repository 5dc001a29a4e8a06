/* test_trace.h: two traces that must be the same, bit for bit (1 thread
 * against several, a fresh block against a reused one).
 *
 * Usage (after the cmocka includes and attn.h):
 *
 *     #include "test_trace.h"
 *     assert_traces_identical("(n=512, 3 threads)", one, many);
 *
 * Compares every step's name, shape, numbers (naming the first cell that
 * differs), links and row flags; fails the current cmocka test at the first
 * difference. Header-only and static inline, like test_util.h.
 */
#ifndef ATTNVIZ_TEST_TRACE_H
#define ATTNVIZ_TEST_TRACE_H

#include <stddef.h>
#include <string.h>

static inline void assert_traces_identical(const char *what, const AttnTrace *a, const AttnTrace *b)
{
    if (a->n_steps != b->n_steps) fail_msg("%s: %d steps against %d", what, a->n_steps, b->n_steps);
    for (int s = 0; s < a->n_steps; s++) {
        const AttnStep *x = &a->steps[s], *y = &b->steps[s];
        assert_string_equal(x->name, y->name);
        assert_int_equal(x->rows, y->rows);
        assert_int_equal(x->cols, y->cols);
        size_t n = (size_t)x->rows * (size_t)x->cols;
        if (memcmp(x->data, y->data, sizeof(float) * n) != 0) {
            size_t i = 0;
            while (i < n && memcmp(&x->data[i], &y->data[i], sizeof(float)) == 0) i++;
            fail_msg("%s: step %s differs at [%zu,%zu]: %.9g against %.9g", what, x->name, i / (size_t)x->cols,
                     i % (size_t)x->cols, (double)x->data[i], (double)y->data[i]);
        }
        assert_int_equal(x->n_from, y->n_from);
        assert_memory_equal(x->from, y->from, sizeof *x->from * (size_t)x->n_from);
        assert_true((x->row_flags == NULL) == (y->row_flags == NULL));
        if (x->row_flags) assert_memory_equal(x->row_flags, y->row_flags, (size_t)x->rows);
    }
}

#endif
