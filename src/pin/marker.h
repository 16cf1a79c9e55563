/* marker.h - placeholder */
