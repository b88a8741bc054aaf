// The one translation unit that compiles Asio and Beast (separate compilation):
// every other file includes their headers without the implementation.
#include <boost/asio/impl/src.hpp>
#include <boost/beast/src.hpp>
#include <boost/asio/ssl/impl/src.hpp>
