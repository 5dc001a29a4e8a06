/* test_trace.h: comparing whole traces.
 *
 * assert_traces_identical: two traces that must be the same, bit for bit
 * (1 thread against several, a fresh block against a reused one).
 * assert_trace_matches_reference: attn_trace_create's trace (the fast path)
 * against attn_reference_forward's for the same config (reference.c).
 *
 * Usage (after the cmocka includes and attn.h):
 *
 *     #include "test_trace.h"
 *     assert_traces_identical("(n=512, 3 threads)", one, many);
 *     assert_trace_matches_reference("(n=512)", fast, &cfg, TEST_ABS_TOL, TEST_REL_TOL);
 *
 * Both compare every step's name, kind, head, shape, links and row flags
 * exactly, and fail the current cmocka test at the first difference, naming
 * the step and cell. Header-only and static inline, like test_util.h.
 */
#ifndef ATTNVIZ_TEST_TRACE_H
#define ATTNVIZ_TEST_TRACE_H

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "test_util.h"

/* Fails unless step x's numbers are y's, bit for bit. */
static inline void assert_step_data_identical(const char *what, const AttnStep *x, const AttnStep *y)
{
    size_t n = (size_t)x->rows * (size_t)x->cols;
    if (memcmp(x->data, y->data, sizeof(float) * n) != 0) {
        size_t i = 0;
        while (i < n && memcmp(&x->data[i], &y->data[i], sizeof(float)) == 0) i++;
        fail_msg("%s: step %s differs at [%zu,%zu]: %.9g against %.9g", what, x->name, i / (size_t)x->cols,
                 i % (size_t)x->cols, (double)x->data[i], (double)y->data[i]);
    }
}

/* Fails unless a and b have the same steps: names, kinds, heads, shapes,
 * links and row flags (the numbers are the caller's to compare). */
static inline void assert_same_steps(const char *what, const AttnTrace *a, const AttnTrace *b)
{
    if (a->n_steps != b->n_steps) fail_msg("%s: %d steps against %d", what, a->n_steps, b->n_steps);
    for (int s = 0; s < a->n_steps; s++) {
        const AttnStep *x = &a->steps[s], *y = &b->steps[s];
        if (strcmp(x->name, y->name) != 0 || x->kind != y->kind || x->head != y->head || x->rows != y->rows ||
            x->cols != y->cols)
            fail_msg("%s: step %d is %s (kind %d, head %d, %d×%d) against %s (kind %d, head %d, %d×%d)", what, s,
                     x->name, (int)x->kind, x->head, x->rows, x->cols, y->name, (int)y->kind, y->head, y->rows,
                     y->cols);
        assert_int_equal(x->n_from, y->n_from);
        assert_memory_equal(x->from, y->from, sizeof *x->from * (size_t)x->n_from);
        assert_true((x->row_flags == NULL) == (y->row_flags == NULL));
        if (x->row_flags && memcmp(x->row_flags, y->row_flags, (size_t)x->rows) != 0)
            fail_msg("%s: step %s: row flags differ", what, x->name);
    }
}

static inline void assert_traces_identical(const char *what, const AttnTrace *a, const AttnTrace *b)
{
    assert_same_steps(what, a, b);
    for (int s = 0; s < a->n_steps; s++) assert_step_data_identical(what, &a->steps[s], &b->steps[s]);
}

/* fast (attn_trace_create's trace of cfg) against attn_reference_forward(cfg):
 * the same steps; the inputs, weights and biases bit for bit (both record
 * them as given); every computed number within abs_tol + rel_tol·|ref|, the
 * fast path summing in float in blocks and taking e^x from a polynomial
 * where the reference sums in double. Returns the largest |fast - ref| /
 * (abs_tol + rel_tol·|ref|) over the computed numbers (≤ 1 when it passes). */
static inline double assert_trace_matches_reference(const char *what, const AttnTrace *fast, const AttnConfig *cfg,
                                                    double abs_tol, double rel_tol)
{
    char err[256], name[256];
    AttnTrace *ref = attn_reference_forward(cfg, err, sizeof err);
    if (!ref) fail_msg("%s: attn_reference_forward: %s", what, err);
    assert_same_steps(what, fast, ref);
    double worst = 0;
    for (int s = 0; s < ref->n_steps; s++) {
        const AttnStep *x = &fast->steps[s], *y = &ref->steps[s];
        snprintf(name, sizeof name, "%s: fast against reference, %s", what, x->name);
        if (x->kind == ATTN_STEP_INPUT || x->kind == ATTN_STEP_WEIGHT || x->kind == ATTN_STEP_BIAS) {
            assert_step_data_identical(name, x, y);
            continue;
        }
        assert_floats_close(name, x->data, y->data, x->rows, x->cols, abs_tol, rel_tol);
        for (size_t i = 0; i < (size_t)x->rows * (size_t)x->cols; i++)
            if (isfinite(y->data[i])) {
                double r =
                    fabs((double)x->data[i] - (double)y->data[i]) / (abs_tol + rel_tol * fabs((double)y->data[i]));
                if (r > worst) worst = r;
            }
    }
    attn_trace_destroy(ref);
    return worst;
}

#endif
