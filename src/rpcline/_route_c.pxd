# The route core's C-level interface, cimported by _stream_c.pyx for over-long lines.

cdef object _prefix_id(const unsigned char* data, Py_ssize_t size)
cdef object _refusal(object error, object id)
