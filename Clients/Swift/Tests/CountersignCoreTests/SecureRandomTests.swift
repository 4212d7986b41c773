import CountersignCore
import Testing

@Suite("Random values")
struct SecureRandomTests {
    @Test("bytes come in the number asked for, every byte value turns up, and two draws differ")
    func bytes() {
        for count in 0...41 { #expect(SecureRandom.bytes(count).count == count) }
        let many = SecureRandom.bytes(1 << 16)
        #expect(Set(many).count == 256)
        #expect(SecureRandom.bytes(16) != SecureRandom.bytes(16))
    }

    @Test("characters are drawn from the alphabet alone and evenly, also when its size does not divide 256")
    func evenCharacters() {
        // 200 characters: taking `byte % 200` of every byte would make the first 56 twice as likely.
        let alphabet = (0..<200).map { Character(Unicode.Scalar(0x100 + $0)!) }
        let drawn = SecureRandom.string(length: 200_000, from: alphabet)
        #expect(drawn.count == 200_000)
        var counts: [Character: Int] = [:]
        for character in drawn { counts[character, default: 0] += 1 }
        #expect(Set(counts.keys).isSubset(of: Set(alphabet)))
        // Each is expected 1,000 times (standard deviation about 32); a skewed draw gives the first 56 about 1,560.
        #expect(counts.values.allSatisfy { (800...1200).contains($0) }, "\(counts.values.sorted().prefix(3)) … \(counts.values.sorted().suffix(3))")
        let digits = SecureRandom.string(length: 6, from: Array("0123456789"))
        #expect(digits.count == 6 && digits.allSatisfy(\.isNumber))
    }
}
