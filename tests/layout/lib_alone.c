/* libbitprobe.a links into a program on its own: this program is linked
 * with every member of the library (--whole-archive, Makefile.am) and its
 * external libraries, nothing of the bitprobe binary, so that a call from
 * the library into cli/ fails the build of the tests. */
#include <stdio.h>

int main(void)
{
    puts("libbitprobe.a: every member linked on its own");
    return 0;
}
