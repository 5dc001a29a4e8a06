/* placeholder until the view module lands */
int attnviz_view_placeholder_(void); int attnviz_view_placeholder_(void) { return 0; }
