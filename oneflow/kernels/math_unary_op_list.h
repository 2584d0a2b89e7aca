#pragma once
// The unary math ops and the functor that computes each, once for every device: a kernel file
// passes its registration macros, each called as MACRO(op type, functor name).
//   FULL:     forward and gradient kernels for the floating dtypes;
//   FORWARD:  forward only (zero-gradient ops, whose gradient is a constant_like);
//   INTEGERS: forward kernels for int32 and int64 too.
// The functors are the formulas of math_unary_formulas.h, instantiated with HostMath (CPU) or
// cuda::DeviceMath (GPU).

#define OF_FOR_EACH_MATH_UNARY_OP(FULL, FORWARD, INTEGERS) \
  FULL("abs", Abs);                                        \
  INTEGERS("abs", Abs);                                    \
  FULL("acos", Acos);                                      \
  FULL("acosh", Acosh);                                    \
  FULL("asin", Asin);                                      \
  FULL("asinh", Asinh);                                    \
  FULL("atan", Atan);                                      \
  FULL("atanh", Atanh);                                    \
  FORWARD("ceil", Ceil);                                   \
  FULL("cos", Cos);                                        \
  FULL("cosh", Cosh);                                      \
  FULL("erf", Erf);                                        \
  FULL("erfc", Erfc);                                      \
  FULL("exp", Exp);                                        \
  FULL("expm1", Expm1);                                    \
  FORWARD("floor", Floor);                                 \
  FULL("lgamma", Lgamma);                                  \
  FULL("log", Log);                                        \
  FULL("log1p", Log1p);                                    \
  FULL("log_sigmoid", LogSigmoid);                         \
  FULL("negative", Negative);                              \
  INTEGERS("negative", Negative);                          \
  FULL("reciprocal", Reciprocal);                          \
  FULL("reciprocal_no_nan", ReciprocalNoNan);              \
  FORWARD("rint", Rint);                                   \
  FORWARD("round", Round);                                 \
  FULL("rsqrt", Rsqrt);                                    \
  FULL("sigmoid_v2", SigmoidV2);                           \
  FORWARD("sign", Sign);                                   \
  INTEGERS("sign", Sign);                                  \
  FULL("sin", Sin);                                        \
  FULL("sinh", Sinh);                                      \
  FULL("softplus", Softplus);                              \
  FULL("sqrt", Sqrt);                                      \
  FULL("tan", Tan);                                        \
  FULL("gelu", Gelu);                                      \
  FULL("hardsigmoid", HardSigmoid);                        \
  FULL("hardswish", HardSwish);                            \
  FULL("hardtanh", HardTanh);                              \
  FULL("leaky_relu", LeakyRelu);                           \
  FULL("elu", Elu)
