/* trace_json.c: the trace as "attnviz-trace/1" JSON.
 *
 * Written by hand rather than through cJSON for two reasons: float32 values
 * must round-trip (%.9g), and blocked cells must appear as the string "-inf",
 * which no JSON number can express. Large traces stream straight to the file. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lesson.h"
#include "lesson_json.h" /* json_put_string */

static void put_number(FILE *out, float v)
{
    if (isnan(v))
        fputs("\"nan\"", out);
    else if (isinf(v))
        fputs(v < 0 ? "\"-inf\"" : "\"inf\"", out);
    else {
        char buf[32];
        snprintf(buf, sizeof buf, "%.9g", (double)v);
        fputs(buf, out);
    }
}

static void put_string_list(FILE *out, char *const *items, int n)
{
    fputc('[', out);
    for (int i = 0; i < n; i++) {
        if (i) fputs(", ", out);
        json_put_string(out, items[i]);
    }
    fputc(']', out);
}

int trace_write_json(FILE *out, const Lesson *lesson, const AttnTrace *t)
{
    const AttnConfig *c = &t->cfg;
    int additive = c->attention == ATTN_ADDITIVE;
    errno = 0;
    fputs("{\"format\": \"attnviz-trace/1\", \"lesson\": ", out);
    json_put_string(out, lesson->id);
    fputs(",\n \"tokens\": ", out);
    put_string_list(out, lesson->tokens, lesson->n_tokens);
    if (c->cross) {
        fputs(", \"source_tokens\": ", out);
        put_string_list(out, lesson->source_tokens, lesson->n_source_tokens);
    }
    fprintf(out,
            ",\n \"config\": {\"attention\": \"%s\", \"cross\": %s, \"n_q\": %d, \"n_k\": %d, "
            "\"d_model\": %d, \"heads\": %d, \"d_k\": %d, \"d_v\": %d, \"scale\": ",
            additive ? "additive" : "dot", c->cross ? "true" : "false", c->n_q, c->n_k, additive ? c->d_x : c->d_model,
            additive ? 1 : c->heads, additive ? c->d_a : c->d_k, additive ? (c->cross ? c->d_y : c->d_x) : c->d_v);
    put_number(out, t->divisor);
    fprintf(out, ", \"mask\": \"%s\", \"mask_fill\": ", attn_mask_kind_name(c->mask_kind));
    put_number(out, c->mask_fill);
    int window_causal = 0, window = lesson_window(lesson, &window_causal);
    if (window) /* the sliding window the mask's matrix is */
        fprintf(out, ", \"window\": %d, \"window_causal\": %s", window, window_causal ? "true" : "false");
    if (!additive && c->mask_kind != ATTN_MASK_NONE)
        fprintf(out, ", \"mask_order\": \"%s\"", attn_mask_order_name(c->mask_order));
    if (additive) fprintf(out, ", \"d_x\": %d, \"d_y\": %d, \"d_a\": %d", c->d_x, c->cross ? c->d_y : c->d_x, c->d_a);
    if (!additive && c->kv_heads > 0) { /* grouped K/V heads, and which each query head reads */
        fprintf(out, ", \"kv_heads\": %d, \"kv_head_of\": [", c->kv_heads);
        for (int h = 1; h <= c->heads; h++) fprintf(out, "%s%d", h > 1 ? ", " : "", attn_kv_head(c, h));
        fputc(']', out);
    }
    if (!additive && c->positional != ATTN_POSITIONAL_NONE)
        fprintf(out, ", \"positional\": \"%s\"", attn_positional_name(c->positional));
    if (!additive && c->tile > 0) fprintf(out, ", \"tile\": %d", c->tile);
    if (!additive && c->rope_base != 0) {
        fputs(", \"rope\": {\"base\": ", out);
        put_number(out, c->rope_base);
        fputc('}', out);
    }
    if (c->decode == ATTN_DECODE_INCREMENTAL) {
        AttnDecodeMacs m;
        attn_decode_macs(t, &m);
        fprintf(out,
                ", \"decode\": \"incremental\", \"macs\": {\"incremental\": %llu, \"full\": %llu, \"recompute\": "
                "%llu}",
                (unsigned long long)m.incremental, (unsigned long long)m.full, (unsigned long long)m.recompute);
    }
    fputs("},\n \"steps\": [", out);
    for (int i = 0; i < t->n_steps; i++) {
        const AttnStep *s = &t->steps[i];
        fprintf(out, "%s\n  {\"index\": %d, \"kind\": \"%s\", \"name\": ", i ? "," : "", i,
                attn_step_kind_name(s->kind));
        json_put_string(out, s->name);
        if (s->head > 0)
            fprintf(out, ", \"head\": %d", s->head);
        else
            fputs(", \"head\": null", out);
        if (s->at > 0) fprintf(out, ", \"at\": %d", s->at);
        fprintf(out, ", \"shape\": [%d, %d], \"from\": [", s->rows, s->cols);
        for (int f = 0; f < s->n_from; f++) fprintf(out, "%s%d", f ? ", " : "", s->from[f]);
        fputc(']', out);
        if (s->row_flags) {
            fputs(", \"blocked_rows\": [", out);
            int first = 1;
            for (int r = 0; r < s->rows; r++)
                if (s->row_flags[r] & ATTN_ROW_ALL_BLOCKED) {
                    fprintf(out, "%s%d", first ? "" : ", ", r);
                    first = 0;
                }
            fputc(']', out);
        }
        fputs(",\n   \"data\": [", out);
        for (int r = 0; r < s->rows; r++) {
            fputs(r ? ", [" : "[", out);
            const float *row = s->data + (size_t)r * s->cols;
            for (int col = 0; col < s->cols; col++) {
                if (col) fputs(", ", out);
                put_number(out, row[col]);
            }
            fputc(']', out);
        }
        fputs("]}", out);
    }
    fputs("\n]}\n", out);
    if (fflush(out) != 0 || ferror(out)) {
        if (!errno) errno = EIO;
        return -1;
    }
    return 0;
}
