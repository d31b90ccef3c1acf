// A two-model scenario in MAESTRO's network syntax (XRBench usage_scenarios layout).
Network hand_tracking { FPS: 30
  Layer conv1 { Type: CONV  Dimensions: { N: 1, K: 16, C: 3, Y: 64, X: 64, R: 3, S: 3 } }
  Layer conv2 { Type: CONV  Dimensions: { N: 1, K: 32, C: 16, Y: 32, X: 32, R: 3, S: 3 } }
}
Network eye_segmentation { FPS: 60
  Layer conv1 { Type: CONV  Dimensions: { N: 1, K: 8, C: 1, Y: 128, X: 128, R: 3, S: 3 } }
}
