import CountersignCore
import Journeys
import Testing

@Suite("Expressions")
struct ExpressionTests {
    let context = ExpressionContext(
        requestParams: ["email": "a@example.com", "nested": ["deep": "yes"]],
        userContext: ["external_user_id": "ext-1", "user_id": "usr_1"],
        mobileApproveParameters: ["approval_data": ["amount": "5"]],
        variables: ["login": ["email": "b@example.com"]])

    @Test("each source reads its value", arguments: [
        ("@policy.request().params.email", JSONValue.string("a@example.com")),
        ("@policy.request().params.nested.deep", "yes"),
        ("@policy.userContext().external_user_id", "ext-1"),
        ("@policy.getMobileApproveParameters().approval_data", JSONValue.object(["amount": "5"])),
        ("@login.email", "b@example.com"),
        ("@login.missing", nil),
        ("@policy.request().params.absent.deeper", nil),
    ])
    func evaluates(text: String, expected: JSONValue) throws {
        #expect(try Expression(parsing: text).evaluate(in: context) == expected)
    }

    @Test("malformed expressions are refused", arguments: [
        "@", "@policy", "@policy.request()", "@policy.request().headers", "@policy.unknown()", "@login..email", "@9x", "@@literal",
    ])
    func refuses(text: String) {
        #expect(throws: Expression.SyntaxError.self) { try Expression(parsing: text) }
    }
}
