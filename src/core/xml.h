/* Escaping for the XML bitprobe writes (JUnit, SVG): & < > " ' as
 * entities; tab, newline and carriage return as character references
 * inside attributes (so that attribute normalisation keeps them); other C0
 * controls and anything that is not well-formed UTF-8 or not an XML 1.0
 * character (surrogates, U+FFFE, U+FFFF) dropped; DEL and C1 controls as
 * character references. */
#ifndef BP_XML_H
#define BP_XML_H

#include <stdbool.h>
#include <stdio.h>

/* Writes s (NULL: nothing) escaped for element content (attr false) or a
 * quoted attribute value (attr true). */
void bp_xml_put(FILE *f, const char *s, bool attr);

#endif
