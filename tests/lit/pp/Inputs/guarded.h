#ifndef GUARDED_H
#define GUARDED_H
#define GUARDED 7
int guarded;
#endif
