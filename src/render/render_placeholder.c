/* placeholder until the render module lands */
int attnviz_render_placeholder_(void); int attnviz_render_placeholder_(void) { return 0; }
