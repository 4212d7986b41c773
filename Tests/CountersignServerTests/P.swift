import Testing
import VaporTesting
@Test func placeholder() {}
