/* placeholder until the export module lands */
int attnviz_export_placeholder_(void); int attnviz_export_placeholder_(void) { return 0; }
