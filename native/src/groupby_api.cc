#include <napi.h>
namespace basin { void RegisterGroupBy(Napi::Env, Napi::Object) {} }
